"""acdc's own database, asked for through the page while the real server serves it.

Reading the SQLite file through a second descriptor drops the server's POSIX locks, and an
`acdc export` then corrupted the database. Here the page asks for the database (and its
other files) in every spelling, a turn is stored, `acdc export` runs beside the server, and
after the server stops the database is whole and none of its bytes went to the model.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import aiohttp

from bench import CHECKOUT
from bench.live_server import (
    ChatSocket,
    http_client,
    new_session,
    server_environ,
    start_worker,
)

ASKED = [
    ".acdc/acdc.sqlite3",
    "./.acdc/acdc.sqlite3",
    "src//../.acdc/acdc.sqlite3",
    ".acdc/acdc.sqlite3-wal",
    ".acdc/secret_key",
    ".acdc/",
    "db-link",  # a symlink in the repository to the database
    ".git/config",
]
WAIT = 120.0


def make_repo(root: Path) -> Path:
    repo = root / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "app.py").write_text("def greet(name):\n    return f'hello {name}'\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "db-link").symlink_to(repo / ".acdc" / "acdc.sqlite3")
    return repo


async def read_until(socket: ChatSocket, wanted) -> list[str]:
    frames = []
    while True:
        message = await socket.ws.receive(timeout=WAIT)
        assert message.type == aiohttp.WSMsgType.TEXT, f"socket ended: {message.type}"
        frames.append(message.data)
        if wanted(message.data):
            return frames


async def test_the_database_is_never_read_and_survives_an_export_beside_the_server(tmp_path):
    repo = make_repo(tmp_path)
    records = tmp_path / "requests.jsonl"
    environ = server_environ(repo, repo / ".acdc", {"ACDC_RECORD_REQUESTS": str(records)})
    worker = start_worker(environ, tmp_path / "server.log")
    try:
        async with http_client() as http:
            session_id = await new_session(http, worker.url)
            socket = await ChatSocket.open(http, worker.url, session_id)
            for path in ASKED:
                frame = {"action": "select", "path": [path], "confirm": [path]}
                await socket.ws.send_str(json.dumps(frame))
                refusal = await read_until(socket, lambda f: 'role="alert"' in f)
                assert "never read" in refusal[-1] or "outside" in refusal[-1], refusal[-1]
            outcome = await socket.turn("what does greet do?", timeout=WAIT)
            assert outcome.status == "complete", outcome
            await socket.close()
        export = subprocess.run(
            [sys.executable, "-m", "acdc", "export", session_id, "--format", "jsonl"],
            env=environ,
            cwd=CHECKOUT,
            capture_output=True,
            text=True,
            timeout=WAIT,
        )
        assert export.returncode == 0, export.stderr
        assert "what does greet do?" in export.stdout
    finally:
        worker.stop()
    log = worker.log.read_text()
    assert "Traceback" not in log, log[-3000:]
    database = sqlite3.connect(repo / ".acdc" / "acdc.sqlite3")
    try:
        assert database.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert database.execute("SELECT count(*) FROM history_message").fetchone()[0] == 2
    finally:
        database.close()
    sent = records.read_bytes()
    assert b"SQLite format 3" not in sent and b"[core]" not in sent
