"""Versions of a message over the websocket: Regenerate a reply, Edit an earlier message,
switch between the versions; the next request follows the version shown."""

from __future__ import annotations

import io
import json

import pytest
from channels.db import database_sync_to_async
from django.test import Client
from PIL import Image as PILImage

from chat.live.served import served
from chat.turn.branches.versions import BranchRefused, switch
from chat.web.conversation import render_conversation
from history.images import DecodeGate, image_store
from history.models import Session
from tests.chat.sockets import connect, frames_until, new_session, send, stored

pytestmark = pytest.mark.django_db(transaction=True)


async def exchange(ws, fake, text: str, answer: str) -> None:
    fake.enqueue(answer)
    await send(ws, message=text)
    await frames_until(ws, 'data-status="complete"')


def in_view(rows) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in rows if not m.rolled_back and not m.system_event]


def page(session) -> str:
    return render_conversation(Session.objects.get(pk=session.pk))


async def test_regenerate_keeps_the_old_reply_as_a_version_and_the_switcher_brings_it_back(fake):
    session = await new_session()
    ws = await connect(session.id)
    await exchange(ws, fake, "What is a parser?", "First answer.")
    await exchange(ws, fake, "And a lexer?", "Lexer answer.")
    first_request = fake.requests[0].messages
    reply = next(m for m in await stored(session) if m.content == "First answer.")

    fake.enqueue("Second answer.")
    await send(ws, message="", branch=reply.id)
    frames = await frames_until(ws, 'data-status="complete"')
    await frames_until(ws, "Version 2 of 2")  # the conversation drawn again with its switcher

    assert "Second answer." in frames[-1]
    assert fake.requests[-1].messages == first_request  # asked again from the same prefix
    rows = await stored(session)
    assert in_view(rows) == [("user", "What is a parser?"), ("assistant", "Second answer.")]
    html = await database_sync_to_async(page)(session)
    assert "Version 2 of 2" in html and 'aria-label="Previous version"' in html
    assert "Lexer answer." not in html  # the other version is not folded in, it is switched to

    older = next(m for m in rows if m.content == "What is a parser?" and m.rolled_back)
    await database_sync_to_async(switch)(session.id, older.id, served())
    rows = await stored(session)
    assert in_view(rows) == [
        ("user", "What is a parser?"),
        ("assistant", "First answer."),
        ("user", "And a lexer?"),
        ("assistant", "Lexer answer."),
    ]
    assert "Version 1 of 2" in await database_sync_to_async(page)(session)

    await exchange(ws, fake, "And a grammar?", "Grammar answer.")
    sent = json.dumps(fake.requests[-1].messages)
    assert "Lexer answer." in sent and "Second answer." not in sent  # follows the version shown
    await ws.disconnect()


async def test_editing_an_earlier_message_makes_a_version_of_it(fake):
    session = await new_session()
    ws = await connect(session.id)
    await exchange(ws, fake, "Explain the parser", "Parser answer.")
    await exchange(ws, fake, "Now the lexer", "Lexer answer.")
    first = next(m for m in await stored(session) if m.content == "Explain the parser")

    fake.enqueue("Tokenizer answer.")
    await send(ws, message="Explain the tokenizer", branch=first.id)
    await frames_until(ws, "Version 2 of 2")

    rows = await stored(session)
    assert in_view(rows) == [("user", "Explain the tokenizer"), ("assistant", "Tokenizer answer.")]
    sent = json.dumps(fake.requests[-1].messages)
    assert "Explain the tokenizer" in sent and "Parser answer." not in sent
    html = await database_sync_to_async(page)(session)
    assert html.index("Version 2 of 2") < html.index("Tokenizer answer.")  # on the message
    await ws.disconnect()


async def test_a_message_out_of_view_cannot_be_written_again(fake):
    session = await new_session()
    ws = await connect(session.id)
    await exchange(ws, fake, "Explain the parser", "Parser answer.")
    await send(ws, message="", branch="m-no-such-message")
    frames = await frames_until(ws, 'role="alert"')
    assert "no longer in view" in frames[-1]
    assert in_view(await stored(session)) == [
        ("user", "Explain the parser"),
        ("assistant", "Parser answer."),
    ]
    with pytest.raises(BranchRefused):
        await database_sync_to_async(switch)(session.id, "m-no-such-message", served())
    await ws.disconnect()


async def test_regenerate_asks_the_question_again_with_its_images(fake):
    out = io.BytesIO()
    PILImage.new("RGB", (120, 80), (0, 160, 90)).save(out, format="PNG")
    image = await database_sync_to_async(image_store)(out.getvalue(), decodes=DecodeGate())
    session = await new_session()
    ws = await connect(session.id)
    fake.enqueue("A green rectangle.")
    await send(ws, message="What is in this picture?", image=image.sha256)
    await frames_until(ws, 'data-status="complete"')
    first_request = fake.requests[-1].messages
    reply = next(m for m in await stored(session) if m.content == "A green rectangle.")

    fake.enqueue("Still a green rectangle.")
    await send(ws, message="", branch=reply.id)
    await frames_until(ws, "Version 2 of 2")

    assert fake.requests[-1].messages == first_request  # the image went with it
    await ws.disconnect()


async def test_a_switch_in_one_tab_redraws_the_conversation_in_the_others(fake):
    session = await new_session()
    ws = await connect(session.id)
    await exchange(ws, fake, "What is a parser?", "First answer.")
    reply = next(m for m in await stored(session) if m.content == "First answer.")
    fake.enqueue("Second answer.")
    await send(ws, message="", branch=reply.id)
    await frames_until(ws, "Version 2 of 2")
    older = next(m for m in await stored(session) if m.rolled_back and m.role == "user")

    other_tab = Client()
    response = await database_sync_to_async(other_tab.post)(
        f"/m/{older.id}/show/", headers={"HX-Request": "true"}
    )

    assert response.status_code == 204  # the frame draws every tab, this one too
    frames = await frames_until(ws, "Version 1 of 2")
    assert "First answer." in frames[-1] and "Second answer." not in frames[-1]
    await ws.disconnect()
