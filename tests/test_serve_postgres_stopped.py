"""`acdc serve` on a PostgreSQL the test makes and starts (initdb as `postgres`, a free
port), stopped under a streaming reply and started again, for real, the server in a
subprocess read as the page reads it.

While the database is down the tab is told in one line naming the database and what to
do (never "The server stopped…", which is for acdc's own worker); once PostgreSQL is back
the reply's row ends by itself as an error with that line as its reason, the text shown
so far kept; the next message is answered in full; the server's log has no traceback.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import psycopg
import pytest

from bench.live_server import (
    ChatSocket,
    http_client,
    make_repo,
    new_session,
    server_environ,
    start_worker,
)
from tests.chat.faults.test_postgres_stopped import BIN, _as_postgres
from tests.chat.faults.test_postgres_stopped import postgres as postgres  # the fixture
from tests.test_serve_redis_killed import WAIT, _frames_until

REPLY = " ".join(f"word{n}" for n in range(600))  # words that differ: litellm stops repeats


@pytest.fixture
def served(postgres, tmp_path: Path):
    port, data = postgres
    url = f"postgres://postgres@127.0.0.1:{port}/postgres"
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": REPLY, "chunk_size": 5, "chunk_delay": 0.03}, "Back."]))
    environ = server_environ(
        make_repo(tmp_path / "repo", files=1),
        tmp_path / "data",
        {"DATABASE_URL": url, "ACDC_FAKE_SCRIPT": str(script)},
    )
    worker = start_worker(environ, tmp_path / "serve.log")
    yield worker, url, port, data
    worker.stop()


def _start_again(port: int, data: Path) -> None:
    """As the fixture started it: its port, its socket folder, its log."""
    options = f"'-p {port} -k {data.parent} -c listen_addresses=127.0.0.1'"
    log = data.parent / "server.log"
    _as_postgres(f"{BIN}/pg_ctl", "-D", str(data), "-l", str(log), "-o", options, "-w", "start")


def _last_reply(url: str) -> tuple[str, str, str] | None:
    try:
        with psycopg.connect(url, connect_timeout=2) as db:
            return db.execute(
                "SELECT status, content, error FROM history_message WHERE role = 'assistant'"
                " ORDER BY seq DESC LIMIT 1"
            ).fetchone()
    except psycopg.OperationalError:
        return None  # still starting


def _ended(url: str) -> tuple[str, str, str]:
    deadline = time.monotonic() + WAIT
    while (row := _last_reply(url)) is None or row[0] == "streaming":
        assert time.monotonic() < deadline, f"the reply's row in {WAIT} s: {row}"
        time.sleep(0.1)  # a poll of the stored row, not a wait for a guess
    return row


async def test_postgres_stopped_mid_reply_is_one_line_ended_truthfully_and_recovered(served):
    worker, url, port, data = served
    async with http_client() as http:
        session_id = await new_session(http, worker.url)
        socket = await ChatSocket.open(http, worker.url, session_id)
        await socket.send_message("count for me, slowly")
        await _frames_until(socket, "word40")
        _as_postgres(f"{BIN}/pg_ctl", "-D", str(data), "-m", "fast", "-w", "stop")
        told = (await _frames_until(socket, "The database is unreachable"))[-1]
        assert "DATABASE_URL" in told and "server stopped" not in told.lower()
        _start_again(port, data)
        status, content, error = _ended(url)
        assert status == "error" and error.startswith("The database is unreachable")
        assert content.startswith("word0 word1")
        await socket.close()
        socket = await ChatSocket.open(http, worker.url, session_id)
        outcome = await socket.turn("and now?", timeout=WAIT)
        assert (outcome.status, outcome.detail) == ("complete", "")
        assert _last_reply(url)[:2] == ("complete", "Back.")
        await socket.close()
    assert "Traceback" not in worker.log.read_text()
