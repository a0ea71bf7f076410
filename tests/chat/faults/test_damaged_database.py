"""A SQLite file damaged under a streaming reply, for real: random bytes written over the
middle pages that hold the conversation (found with SQLite's `dbstat`), in the test's own
copy of the database, while the reply streams.

The tab is told in one line that the database is damaged, where it is and what to do; the
log has that line and no traceback; another page asked for meanwhile is that line too (a
503), not a server error. Once the pages are put back as they were (a restore from a
backup, as the line says), the reply's row ends, with no new message, as an error whose
reason names the damage, and the session is free.
"""

from __future__ import annotations

import logging
import os
import random
import sqlite3
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from django.test import Client

from chat.llm.fake import FakeStep
from history.models import Session
from tests.chat.faults.smalldisk import moved_database, put_back
from tests.chat.sockets import WAIT, connect, eventually, frames_until, new_session, send, stored

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.sqlite_file]
LONG = " ".join(f"word{n}" for n in range(3000))
CONVERSATION = ("history_message", "history_streampart", "history_session")
PAGE = 512  # acdc's page size (acdc.settings)


class Damage:
    """Random bytes over the pages of `tables` in the SQLite file at `path`, and the pages
    as they were, to put back."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.kept: dict[int, bytes] = {}  # page number: its bytes before the damage
        self.written: dict[int, bytes] = {}

    def strike(self, tables=CONVERSATION) -> int:
        """Move what the write-ahead log holds into the file, then damage the tables'
        pages there (again: the log's newer pages overwrite the earlier damage)."""
        with sqlite3.connect(self.path, timeout=WAIT) as db:
            while db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]:
                pass  # a reader held the log: again
            names = ", ".join("?" for _ in tables)
            sql = "SELECT d.pageno FROM dbstat d JOIN sqlite_schema s ON d.name = s.name "
            sql += f"WHERE s.tbl_name IN ({names}) AND d.pageno > 1"
            pages = sorted({row[0] for row in db.execute(sql, tables)})
        fd = os.open(self.path, os.O_RDWR)
        try:
            for number in pages:
                at = (number - 1) * PAGE
                now = os.pread(fd, PAGE, at)
                if self.written.get(number) != now:  # the page as the database has it
                    self.kept[number] = now
                noise = random.Random(number).randbytes(PAGE)
                os.pwrite(fd, noise, at)
                self.written[number] = noise
            os.fsync(fd)
        finally:
            os.close(fd)
        return len(pages)

    def repair(self) -> None:
        """The pages put back as they were: what restoring the file from a backup does."""
        fd = os.open(self.path, os.O_RDWR)
        try:
            for number, page in self.kept.items():
                os.pwrite(fd, page, (number - 1) * PAGE)
            os.fsync(fd)
        finally:
            os.close(fd)


@pytest.fixture
def damage(tmp_path):
    copy, original = moved_database(tmp_path)
    yield Damage(copy)
    put_back(original)


def _tracebacks(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]


async def test_pages_damaged_mid_stream_end_the_reply_in_one_line(damage, fake, caplog):
    caplog.set_level(logging.INFO)
    fake.enqueue(FakeStep(text=LONG, chunk_delay=0.02, chunk_size=8))
    session = await new_session()
    other = await new_session()
    ws = await connect(session.id)
    await send(ws, message="Write a lot.")
    await frames_until(ws, "word0")
    await eventually(lambda: stored(session), lambda rows: rows[-1].role == "assistant")
    assert damage.strike() > 10
    frames = await frames_until(ws, "is damaged")
    line = frames[-1]
    assert f"The database {damage.path} is damaged (database disk image is malformed)" in line
    assert "restore it from a backup" in line
    assert "Something went wrong" not in "".join(frames)
    page = await sync_to_async(Client(raise_request_exception=False).get)(f"/s/{other.id}/")
    assert page.status_code == 503
    assert "is damaged (database disk image is malformed)" in page.content.decode()
    assert _tracebacks(caplog) == []

    damage.repair()  # no new message: the ending the damage kept is stored by itself
    (_, reply) = await eventually(lambda: stored(session), lambda rows: rows[-1].error)
    assert (reply.role, reply.status) == ("assistant", "error") and "word0" in reply.content
    assert reply.error.startswith(f"The database {damage.path} is damaged")
    lease = await sync_to_async(lambda: Session.objects.get(pk=session.pk).turn_owner)()
    assert lease == ""
    fake.enqueue(FakeStep(text="Back."))  # the file whole again: the next message works
    await send(ws, message="And now?")
    await frames_until(ws, 'data-status="complete"')
    assert [(r.role, r.content) for r in (await stored(session))[-2:]] == [
        ("user", "And now?"),
        ("assistant", "Back."),
    ]
    assert _tracebacks(caplog) == []
    await ws.disconnect()
