"""A message's @-mentions in a turn: checked, stored with the user message, drawn as chips in
the live frame and in the page drawn again; a mention that cannot be sent refuses the turn."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async

from chat.llm.fake import FakeStep
from chat.web.conversation import render_conversation
from history.models import Message
from tests.chat.sockets import connect, frames_until, new_session, send

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("served_root")]
ODD = "docs/notes: café.md"


@pytest.fixture
def repo_files():
    return {
        "src/utils.py": "def slugify(text):\n    return text\n",
        ODD: "# Notes\n",
        ".env": "X=1\n",
    }


@pytest.fixture
def repo_is_git():
    return True


def chip(path: str, symbol: str = "", line: int = 0, body: bool = False) -> str:
    if not symbol:
        return json.dumps({"path": path})
    return json.dumps({"path": path, "symbol": symbol, "line": line, "body": body})


@database_sync_to_async
def stored_mentions(session) -> list:
    return list(
        Message.objects.filter(session=session, role="user").values_list("mentions", flat=True)
    )


page_html = database_sync_to_async(render_conversation)


def fresh(session):
    return type(session).objects.get(pk=session.pk)


async def test_mentions_are_stored_with_the_message_and_drawn_as_chips(fake):
    session = await new_session()
    ws = await connect(session.id)
    fake.enqueue(FakeStep(text="Noted."))
    await send(ws, message="See these", mention=[chip(ODD), chip("src/utils.py", "slugify", 1)])
    frames = await frames_until(ws, 'data-status="complete"')
    started = next(f for f in frames if 'aria-label="Mentioned"' in f)
    assert "docs/notes: café.md" in started and "src/utils.py:1" in started
    assert await stored_mentions(session) == [
        [
            {"kind": "file", "path": ODD, "symbol": "", "line": 0},
            {"kind": "symbol", "path": "src/utils.py", "symbol": "slugify", "line": 1},
        ]
    ]
    drawn = await page_html(session)
    assert 'aria-label="Mentioned"' in drawn and "slugify" in drawn
    await ws.disconnect()


@pytest.mark.parametrize(
    ("path", "says"), [(".env", "looks like a secret"), ("src/gone.py", "names no file")]
)
async def test_a_mention_that_cannot_be_sent_refuses_the_turn_and_stores_nothing(fake, path, says):
    session = await new_session()
    ws = await connect(session.id)
    await send(ws, message="See this", mention=chip(path))
    frames = await frames_until(ws, says)
    assert f"@{path}" in frames[-1]
    assert await stored_mentions(session) == []
    await ws.disconnect()


async def test_a_symbols_body_goes_to_the_model_in_the_same_turn(fake):
    session = await new_session()
    ws = await connect(session.id)
    fake.enqueue(FakeStep(text="It returns its text."))
    await send(
        ws, message="What does it do?", mention=chip("src/utils.py", "slugify", 1, body=True)
    )
    await frames_until(ws, 'data-status="complete"')
    sent = json.dumps(fake.requests[-1].messages)
    assert "ACTIVE_CONTENT id=toolcall:" in sent
    assert "src/utils.py:1-2 (function slugify, mentioned by the person)" in sent
    assert (await stored_mentions(session))[0][0]["kind"] == "body"
    await ws.disconnect()


async def test_a_regenerated_question_keeps_its_chips(fake):
    session = await new_session()
    ws = await connect(session.id)
    fake.enqueue(FakeStep(text="First."))
    await send(ws, message="Explain this", mention=[chip("src/utils.py")])
    await frames_until(ws, 'data-status="complete"')
    reply = await database_sync_to_async(
        lambda: Message.objects.get(session=session, role="assistant")
    )()
    fake.enqueue(FakeStep(text="Second."))
    await send(ws, message="", branch=reply.id)
    await frames_until(ws, "Version 2 of 2")
    chips = [{"kind": "file", "path": "src/utils.py", "symbol": "", "line": 0}]
    assert await stored_mentions(session) == [chips, chips]  # both versions of the question
    html = await page_html(await database_sync_to_async(fresh)(session))
    assert html.count('aria-label="Mentioned"') == 1  # the version in view shows its chip
    await ws.disconnect()
