"""`acdc serve` stops on SIGINT and SIGTERM with a tab connected and a reply streaming.

The real server runs in a subprocess (the fake model, scripted to reply slowly); a websocket
talks to it as the page does. The process must exit within `STOP_SECONDS` of the signal
(the requirement itself, not a benchmark), and the reply it was streaming must be stored
as interrupted with the text it had, read from the server's own SQLite file.
"""

from __future__ import annotations

import json
import signal
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

STOP_SECONDS = 5.0
STREAM_TIMEOUT = 60.0
# Words that differ: litellm ends a stream that repeats one chunk over and over.
REPLY = " ".join(f"word{n}" for n in range(3000))


@pytest.fixture
def server(tmp_path: Path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": REPLY, "chunk_size": 5, "chunk_delay": 0.05}]))
    data = tmp_path / "data"
    environ = server_environ(make_repo(tmp_path / "repo", files=1), data, {})
    environ["ACDC_FAKE_SCRIPT"] = str(script)
    worker = start_worker(environ, tmp_path / "serve.log")
    yield worker, data / "acdc.sqlite3"
    worker.stop()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
async def test_a_signal_stops_the_server_and_the_streaming_reply_is_interrupted(server, signum):
    worker, database = server
    async with http_client() as http:
        session_id = await new_session(http, worker.url)
        socket = await ChatSocket.open(http, worker.url, session_id)
        await socket.send_message("tell me slowly")
        await _until_the_reply_streams(socket)
        signalled = time.monotonic()
        worker.process.send_signal(signum)
        worker.process.wait(timeout=STOP_SECONDS + 30)
        stopped_in = time.monotonic() - signalled
    log = worker.log.read_text()
    assert stopped_in < STOP_SECONDS, f"stopped in {stopped_in:.1f} s:\n{log[-3000:]}"
    assert worker.process.returncode == 0, log[-3000:]
    assert "acdc: warning" not in log  # a git repository is served without one
    with sqlite3.connect(database) as db:
        rows = db.execute(
            "SELECT status, content, error FROM history_message WHERE role = 'assistant'"
        ).fetchall()
    assert len(rows) == 1
    status, content, error = rows[0]
    assert (status, error) == ("interrupted", INTERRUPTED_NOTE)
    assert content.strip() and REPLY.startswith(content) and content != REPLY


async def _until_the_reply_streams(socket: ChatSocket) -> None:
    """Frames until one carries some of the reply's text."""
    deadline = time.monotonic() + STREAM_TIMEOUT
    while time.monotonic() < deadline:
        message = await socket.ws.receive(timeout=deadline - time.monotonic())
        assert message.type == aiohttp.WSMsgType.TEXT, message
        if "word1" in message.data:
            return
    raise AssertionError("the reply did not start streaming")
