"""A message sent while another program holds the SQLite database: said as such, kept.

Another process takes the database's write lock for real (`BEGIN EXCLUSIVE` through
Python's sqlite3 module, as any program using SQLite would), and the turn runs through
the real socket and pipeline with `acdc/fake`. SQLite's wait for the lock is cut from
ACDC_DB_LOCK_SECONDS to a fraction of a second for the test. These tests exist in the
SQLite run only: PostgreSQL has no file another program can lock.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from channels.db import database_sync_to_async
from django.db import OperationalError, connections
from django.utils import timezone

from chat.live.served import served
from chat.repo import sessionsets
from chat.turn.turns import TurnInput, TurnServices, locked_notice, run_turn
from history.models import Session
from tests import serving
from tests.chat.sockets import connect, frames_until, new_session, send, stored

HOLD = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("held", flush=True)
sys.stdin.read()  # until the test closes the pipe
db.execute("ROLLBACK")
"""


class Holder:
    """Another process holding the database's write lock until `release`."""

    def __init__(self, path: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", HOLD, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout.readline().strip() == "held"
        self.pid = self.process.pid

    def release(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait(timeout=30)
        self.process.stdout.close()


async def _ignore(event) -> None:
    pass


if connections["default"].vendor == "sqlite":
    pytestmark = pytest.mark.django_db(transaction=True)

    class Lock:
        """Takes the lock when called (after the test has made what it needs), and cuts
        SQLite's wait for it (the connection's `timeout`, from ACDC_DB_LOCK_SECONDS) to a
        fraction of a second while it is held; the tests keep no connection, so the next
        one waits so. Released, the wait is the suite's again: acdc's own writers queue."""

        def __init__(self) -> None:
            self.taken: list[Holder] = []
            self.options = connections["default"].settings_dict["OPTIONS"]
            self.wait = self.options.get("timeout")

        async def __call__(self) -> Holder:
            path = Path(connections["default"].settings_dict["NAME"])
            self.taken.append(await asyncio.to_thread(Holder, path))
            self.options["timeout"] = 0.3
            return self.taken[-1]

        def release_all(self) -> None:
            for holder in self.taken:
                holder.release()
            self.options["timeout"] = self.wait

    @pytest.fixture
    def lock() -> Iterator[Lock]:
        taken = Lock()
        yield taken
        taken.release_all()

    async def test_a_message_sent_while_another_program_locks_the_database_is_kept(lock):
        session = await new_session()
        ws = await connect(session.id)
        holder = await lock()
        await send(ws, message="Are you there?")
        frames = await frames_until(ws, "locked by another program")
        assert f"pid {holder.pid}, python" in frames[-1]
        assert "your message was not sent and is still in the box" in frames[-1]
        # An error of no turn: the page puts the text it sent back into the box (chat.js).
        assert 'data-turn=""' in frames[-1]
        assert "Something went wrong" not in "".join(frames)
        assert await stored(session) == []
        lock.release_all()
        await send(ws, message="Are you there?")
        await frames_until(ws, 'data-status="complete"')
        user, answer = await stored(session)
        assert (user.content, answer.status) == ("Are you there?", "complete")
        await ws.disconnect()

    async def test_a_turn_the_lock_stopped_leaves_the_session_free(lock):
        session = await new_session()
        await lock()
        with pytest.raises(OperationalError, match="database is locked"):
            await run_turn(
                TurnInput(session_id=session.id, user_text="hello"),
                TurnServices(emit=_ignore, wiring=served()),
            )
        since = timezone.now()
        notice = await database_sync_to_async(locked_notice)(session.id, "hello", since)
        assert notice.startswith("The database is locked by another program (pid ")
        assert "your message was not sent and is still in the box" in notice
        lock.release_all()
        finished = await run_turn(
            TurnInput(session_id=session.id, user_text="hello"),
            TurnServices(emit=_ignore, wiring=served()),
        )
        assert finished.status == "complete"
        # Stored after `since`: a lock that ends the turn now ends it after the message.
        notice = await database_sync_to_async(locked_notice)(session.id, "hello", since)
        assert "your message was sent, but its reply could not be stored whole" in notice

    async def test_a_file_selection_while_the_database_is_locked_says_so(lock):
        session = await new_session()
        ws = await connect(session.id)
        await lock()
        await send(ws, action="select", paths=["README.md"], selection="tab1-7")
        frames = await frames_until(ws, "locked by another program")
        assert "the file selection was not saved" in frames[-1]
        # The choice is answered by its name alone: the tab stops waiting to draw rows.
        frames = await frames_until(ws, 'id="picker-update"')
        assert 'data-selection="tab1-7"' in frames[-1] and "data-sel=" not in frames[-1]
        assert await database_sync_to_async(_active_paths)(session.id) == []
        await ws.disconnect()

    async def test_a_tab_opens_while_another_program_locks_the_database(lock, client):
        # Opening a session looks for a dead worker's reply to end; with none to end it
        # must only read, or every page load and connect would wait out the lock and fail.
        session = await new_session()
        await lock()
        ws = await connect(session.id)
        await ws.disconnect()
        page = await database_sync_to_async(client.get)(f"/s/{session.id}/")
        assert page.status_code == 200


def _active_paths(session_id: str) -> list[str]:
    return sessionsets.active_paths(Session.objects.get(pk=session_id), repo=serving.repository())
