"""`acdc serve` on Redis, with Redis killed (SIGKILL) mid-reply and started again, for real:
a redis-server the test starts on a free port with its own data folder, and the real
server in a subprocess (the fake model, scripted to reply slowly), read as the page reads.

While Redis is down the streaming tab is told in one line naming Redis and what to do, the
reply's row ends with a true status (the turn goes on writing to the database) and its
text, the server's log has no traceback, and SIGTERM ends the worker within seconds. Once
Redis is back on the same port, the next message on a new socket is answered in full.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import aiohttp
import pytest

from bench.live_server import (
    ChatSocket,
    free_port,
    http_client,
    make_repo,
    new_session,
    server_environ,
    start_worker,
)

WAIT = 60.0  # s: the longest any step may take on a loaded machine
REPLY = " ".join(f"word{n}" for n in range(400))  # words that differ: litellm stops repeats
SHUTDOWN = 10.0  # s: SIGTERM while Redis is down ends the worker within this


class Redis:
    """A redis-server of the test's own: a free port, its own data folder, no saving."""

    def __init__(self, folder: Path) -> None:
        self.port, self.folder = free_port(), folder
        folder.mkdir()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
        command += ["--dir", str(self.folder), "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE)
        for line in self.process.stdout:  # until it says it takes connections
            if b"Ready to accept connections" in line:
                return
        raise RuntimeError("redis-server exited before it took connections")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
        if self.process is not None:
            self.process.stdout.close()


@pytest.fixture
def served(tmp_path: Path):
    redis = Redis(tmp_path / "redis")
    redis.start()
    script = tmp_path / "script.json"
    slow = {"text": REPLY, "chunk_size": 5, "chunk_delay": 0.02}
    # The last reply streams for over a minute: SIGTERM must meet it still streaming, also
    # on a machine so busy that the outage's steps before it take longer than `slow` does.
    slower = {**slow, "text": " ".join(f"word{n}" for n in range(2400))}
    steps = [slow, {"text": "Back again."}, slower]
    script.write_text(json.dumps(steps))
    environ = server_environ(
        make_repo(tmp_path / "repo", files=1), tmp_path / "data", {"REDIS_URL": redis.url}
    )
    environ["ACDC_FAKE_SCRIPT"] = str(script)
    workers = [start_worker(environ, tmp_path / "serve.log")]
    yield redis, workers, environ, tmp_path
    for worker in workers:
        worker.stop()
    redis.kill()


async def _next(socket: ChatSocket, seconds: float) -> aiohttp.WSMessage:
    """The socket's next message (aiohttp's own receive timeout did not end a wait here)."""
    async with asyncio.timeout(seconds):
        return await socket.ws.receive()


async def _frames_until(socket: ChatSocket, words: str) -> list[str]:
    """The frames up to the first that holds `words` (or the socket's close)."""
    seen, deadline = [], time.monotonic() + WAIT
    while time.monotonic() < deadline:
        message = await _next(socket, deadline - time.monotonic())
        if message.type != aiohttp.WSMsgType.TEXT:
            return [*seen, f"closed {message.data}"]
        seen.append(message.data)
        if words in message.data:
            return seen
    raise AssertionError(f"no {words!r} in {WAIT} s: {seen[-3:]}")


def _assistant_rows(database: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(database) as db:
        return db.execute(
            "SELECT status, content, error FROM history_message WHERE role = 'assistant'"
            " ORDER BY rowid"
        ).fetchall()


def _until(read, done, what: str):
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        found = read()
        if done(found):
            return found
        time.sleep(0.1)
    raise AssertionError(f"{what} in {WAIT} s: {found}")


async def _killed_mid_reply(socket: ChatSocket, redis: Redis, message: str) -> str:
    """Send `message`, kill Redis once the reply streams; the line the tab is told."""
    await socket.send_message(message)
    await _frames_until(socket, "word40")
    redis.kill()
    told = (await _frames_until(socket, "(Redis) is unreachable"))[-1]
    closed = await _next(socket, WAIT)  # 1013: the page's socket reconnects
    assert (closed.type, closed.data) == (aiohttp.WSMsgType.CLOSE, 1013)
    return told


async def test_redis_killed_mid_reply_is_told_ended_truthfully_and_recovered(served):
    redis, workers, environ, folder = served
    database, log = folder / "data" / "acdc.sqlite3", folder / "serve.log"
    async with http_client() as http:
        url = workers[0].url
        session_id = await new_session(http, url)
        socket = await ChatSocket.open(http, url, session_id)
        told = await _killed_mid_reply(socket, redis, "count for me, slowly")
        assert "REDIS_URL" in told and "reconnects when it is back" in told
        await socket.close()
        status, content, error = _until(
            lambda: _assistant_rows(database)[-1],
            lambda row: row[0] != "streaming",
            "the reply's row still streaming",
        )  # the turn went on writing to the database without its tab
        assert (status, content, error) == ("complete", REPLY, "")
        redis.start()  # the same port: the worker's layer must find it again by itself
        socket = await ChatSocket.open(http, url, session_id)  # the first try, as the page's
        outcome = await socket.turn("and now?", timeout=WAIT)
        assert (outcome.status, outcome.detail) == ("complete", "")
        assert _assistant_rows(database)[-1] == ("complete", "Back again.", "")
        await _killed_mid_reply(socket, redis, "once more")
        workers[0].process.terminate()  # SIGTERM, with Redis down and a reply streaming
        workers[0].process.wait(timeout=SHUTDOWN)
        await socket.close()
    status, content, error = _assistant_rows(database)[-1]
    assert status == "interrupted" and content.startswith("word0 word1") and error
    assert "Traceback" not in log.read_text()
