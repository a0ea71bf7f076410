"""`acdc serve` killed with SIGKILL mid-reply keeps what it had saved, and the restarted
server ends that reply as interrupted with its text and indexes it for search then.

The real server runs in a subprocess (the fake model, scripted to reply slowly); a websocket
reads the reply as the page does. Once a word has been shown and the server's SQLite file
holds it (the reply is saved at least once a second, as appended parts), the server is
killed with SIGKILL and started again on the same data folder. How much the last second
may lose is measured by `acdc bench turn --part kill`, not here.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from pathlib import Path

import aiohttp
import pytest

from bench.live_server import (
    ChatSocket,
    http_client,
    make_repo,
    new_session,
    server_environ,
    start_worker,
)
from history.services import INTERRUPTED_NOTE

WAIT = 60.0  # s: for the reply to reach a word, for a save to hold it
REPLY = " ".join(f"word{n}" for n in range(3000))  # words that differ: litellm stops repeats
SHOWN = 120  # the word that must be on the page, and then saved, before the kill
_WORD = re.compile(r"\bword(\d+)\b")


@pytest.fixture
def served(tmp_path: Path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": REPLY, "chunk_size": 5, "chunk_delay": 0.02}]))
    environ = server_environ(make_repo(tmp_path / "repo", files=1), tmp_path / "data", {})
    environ["ACDC_FAKE_SCRIPT"] = str(script)
    workers = [start_worker(environ, tmp_path / "serve.log")]
    yield workers, environ, tmp_path
    for worker in workers:
        worker.stop()


async def test_a_killed_server_keeps_the_saved_reply_and_indexes_it_after_a_restart(served):
    workers, environ, folder = served
    database = folder / "data" / "acdc.sqlite3"
    async with http_client() as http:
        session_id = await new_session(http, workers[0].url)
        socket = await ChatSocket.open(http, workers[0].url, session_id)
        await socket.send_message("count for me, slowly")
        shown = await _until_shown(socket, SHOWN)
        _until_saved(database, f"word{shown}")
        workers[0].kill9()
    workers.append(start_worker(environ, folder / "serve.log"))  # ends the reply it finds
    with sqlite3.connect(database) as db:
        rows = db.execute(
            "SELECT rowid, status, content, error FROM history_message WHERE role = 'assistant'"
        ).fetchall()
        parts = db.execute("SELECT count(*) FROM history_streampart").fetchone()[0]
        found = db.execute(
            "SELECT rowid FROM history_message_fts WHERE history_message_fts MATCH ?",
            [f"word{shown}"],
        ).fetchall()
    assert len(rows) == 1 and parts == 0
    rowid, status, content, error = rows[0]
    assert (status, error) == ("interrupted", INTERRUPTED_NOTE)
    assert REPLY.startswith(content) and f"word{shown} " in content
    assert found == [(rowid,)]


async def _until_shown(socket: ChatSocket, word: int) -> int:
    """Frames until the page shows `word` or a later one; returns the last word shown."""
    deadline, last = time.monotonic() + WAIT, -1
    while last < word and time.monotonic() < deadline:
        message = await socket.ws.receive(timeout=deadline - time.monotonic())
        assert message.type == aiohttp.WSMsgType.TEXT, message
        last = max([last, *(int(n) for n in _WORD.findall(message.data))])
    assert last >= word, f"the reply did not reach word{word}"
    return last


def _until_saved(database: Path, word: str) -> None:
    """Until the server's file holds `word` among the reply's parts (a save follows it)."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        with sqlite3.connect(database) as db:
            text = "".join(
                row[0]
                for row in db.execute('SELECT text FROM history_streampart ORDER BY "offset"')
            )
        if f"{word} " in text:
            return
        time.sleep(0.05)  # polling the file for a condition, bounded by the deadline above
    raise AssertionError(f"{word} was shown but never saved")
