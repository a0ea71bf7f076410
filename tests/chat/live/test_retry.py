"""Retry over the websocket: offered on a failed, cut or stopped reply of the newest
exchange, it writes that reply again in its place, with no edit or rollback notice."""

from __future__ import annotations

import re

import pytest
from channels.db import database_sync_to_async

from chat.llm.fake import FakeStep
from chat.web.conversation import render_conversation
from history.models import Session
from tests.chat.sockets import connect, frames_until, new_session, send, stored

pytestmark = pytest.mark.django_db(transaction=True)
RETRY = re.compile(r'name="retry" value="([^"]+)"')


async def failed_turn(ws, text: str) -> str:
    """Send `text`, wait for its reply to fail, and return the turn its Retry names."""
    await send(ws, message=text)
    frames = await frames_until(ws, 'data-status="error"')
    found = RETRY.search(frames[-1])
    assert found, "the failed reply offers no Retry"
    return found.group(1)


async def test_retry_writes_the_failed_reply_again_in_its_place(fake):
    fake.enqueue(FakeStep(text="Half an answer", chunk_size=5, error="server", error_after=1))
    fake.enqueue(FakeStep(text="The whole answer this time."))
    session = await new_session()
    ws = await connect(session.id)
    turn = await failed_turn(ws, "Explain the parser")

    await send(ws, message="Explain the parser", retry=turn)
    frames = await frames_until(ws, 'data-status="complete"')

    assert "The whole answer this time." in frames[-1]
    redrawn = next(f for f in frames if 'id="conversation"' in f)
    assert "replaced by Retry" in redrawn and "set aside by a rollback" not in redrawn
    rows = await stored(session)
    live = [(m.role, m.content, m.status) for m in rows if not m.rolled_back]
    assert live == [
        ("user", "Explain the parser", "complete"),
        ("assistant", "The whole answer this time.", "complete"),
    ]
    assert [m.content for m in rows if m.system_event] == []  # no "edited" or rollback note
    page = await database_sync_to_async(
        lambda: render_conversation(Session.objects.get(pk=session.pk))
    )()
    assert "replaced by Retry" in page and "set aside by a rollback" not in page  # on a reload
    await ws.disconnect()


async def test_a_stopped_reply_offers_retry(fake):
    fake.enqueue(FakeStep(text="word " * 200, chunk_size=5, chunk_delay=0.02))
    session = await new_session()
    ws = await connect(session.id)
    await send(ws, message="Talk a lot")
    await frames_until(ws, "word")
    await send(ws, action="stop")
    frames = await frames_until(ws, 'data-status="cancelled"')
    assert RETRY.search(frames[-1]) and ">Retry</button>" in frames[-1]
    page = await database_sync_to_async(
        lambda: render_conversation(Session.objects.get(pk=session.pk))
    )()
    assert ">Retry</button>" in page  # and after a reload
    await ws.disconnect()


async def test_an_older_failed_reply_cannot_be_retried_at_the_bottom(fake):
    fake.enqueue(FakeStep(text="Half", chunk_size=5, error="server", error_after=1))
    session = await new_session()
    ws = await connect(session.id)
    old = await failed_turn(ws, "First question")
    await send(ws, message="Second question")
    await frames_until(ws, 'data-status="complete"')

    await send(ws, message="First question", retry=old)
    refusal = await frames_until(ws, 'role="alert"')

    assert "Only the newest reply can be retried" in refusal[-1]
    rows = await stored(session)
    assert [m.content for m in rows if m.role == "user"] == ["First question", "Second question"]
    page = await database_sync_to_async(
        lambda: render_conversation(Session.objects.get(pk=session.pk))
    )()
    assert ">Retry</button>" not in page  # the older failed reply no longer offers it
    await ws.disconnect()
