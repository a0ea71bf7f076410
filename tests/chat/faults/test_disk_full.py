"""A disk that fills up under a turn, for real (a tmpfs the test mounts and fills).

The test database lives on the small disk; a reply streams; the disk fills after its first
words; the page is told in one line that the disk is full and where, the log has that line
and no traceback, and once space is back the reply's row says how it ended (error, the
disk named), the session is free and the next message gets a complete answer.
"""

from __future__ import annotations

import logging

import pytest
from channels.db import database_sync_to_async

from chat.llm.fake import FakeStep
from history.models import Session
from tests.chat.sockets import connect, eventually, frames_until, new_session, send, stored

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.sqlite_file]
LONG = " ".join(f"word{n}" for n in range(400))


def _tracebacks(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]


@database_sync_to_async
def _lease(session: Session) -> str:
    return Session.objects.get(pk=session.pk).turn_owner


async def test_the_disk_filling_mid_stream_ends_the_reply_truthfully(disk, fake, caplog):
    caplog.set_level(logging.INFO)
    fake.enqueue(FakeStep(text=LONG, chunk_delay=0.02, chunk_size=8), FakeStep(text="Back again."))
    session = await new_session()
    ws = await connect(session.id)
    await send(ws, message="Write a lot.")
    await frames_until(ws, "word0")
    disk.fill()
    frames = await frames_until(ws, "The disk is full")
    assert f"free space on {disk.folder}" in frames[-1]
    assert "Something went wrong" not in "".join(frames)
    assert _tracebacks(caplog) == []
    disk.free()
    await send(ws, message="And now?")
    await frames_until(ws, 'data-status="complete"')
    rows = await stored(session)
    user, reply, again, answer = rows
    assert (reply.status, again.content, answer.status) == ("error", "And now?", "complete")
    assert reply.error.startswith("The disk is full") and "word0" in reply.content
    assert await _lease(session) == ""
    assert _tracebacks(caplog) == []
    await ws.disconnect()


async def test_the_kept_ending_is_stored_once_space_is_back_with_no_new_message(disk, fake, caplog):
    caplog.set_level(logging.INFO)
    fake.enqueue(FakeStep(text=LONG, chunk_delay=0.02, chunk_size=8))
    session = await new_session()
    ws = await connect(session.id)
    await send(ws, message="Write a lot.")
    await frames_until(ws, "word0")
    await eventually(lambda: stored(session), lambda rows: rows[-1].role == "assistant")
    disk.fill()
    await frames_until(ws, "The disk is full")  # the disk refused the ending too
    disk.free()  # and nobody sends anything: the ending is stored by itself, in seconds
    ended = lambda rows: rows[-1].status != "streaming"  # noqa: E731
    rows = await eventually(lambda: stored(session), ended, timeout=15)
    frames = await frames_until(ws, '<section id="conversation"')  # drawn again, ended
    assert "disabled>Stop</button>" in frames[-1]
    assert (rows[-1].role, rows[-1].status) == ("assistant", "error")
    assert rows[-1].error.startswith("The disk is full") and "word0" in rows[-1].content
    assert await _lease(session) == ""
    assert _tracebacks(caplog) == []
    await ws.disconnect()
