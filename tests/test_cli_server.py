"""`acdc chat` through the `acdc serve` of its repository, and without one.

The real server runs in a subprocess (the fake model, scripted to reply in small chunks)
and `acdc chat` runs as a user runs it, in another. Through the server the turn is the
server's: a tab's websocket open on the session sees it stream, and the server stores it.
A run file whose server is gone (killed, so its file stayed) or does not answer sends the
chat back to its own process with a one-line note; a stopped server leaves no run file.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from acdc.terminal import runfile
from bench.live_server import (
    ChatSocket,
    frame_text,
    http_client,
    make_repo,
    new_session,
    server_environ,
    start_worker,
)

STREAM_TIMEOUT = 90.0
REPLY = " ".join(f"word{n}" for n in range(40))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("served")
    script = folder / "script.json"
    script.write_text("[]")
    extra = {"ACDC_FAKE_SCRIPT": str(script)}
    environ = server_environ(make_repo(folder / "repo", files=1), folder / "data", extra)
    worker = start_worker(environ, folder / "serve.log")
    yield worker, environ, script
    worker.stop()


def _chat_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "acdc", "chat", *args]


def _chat(environ: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        _chat_command(*args), capture_output=True, text=True, env=environ, timeout=120
    )


async def test_a_reply_goes_through_the_server_and_an_open_tab_sees_it_stream(served):
    worker, environ, script = served
    script.write_text(json.dumps([{"text": REPLY, "chunk_size": 6, "chunk_delay": 0.02}]))
    frames: list[str] = []
    async with http_client() as http:
        session_id = await new_session(http, worker.url)
        tab = await ChatSocket.open(http, worker.url, session_id)
        chat = await asyncio.create_subprocess_exec(
            *_chat_command("--session", session_id, "tell me"),
            env=environ,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:  # the tab keeps its frames while the chat runs: read them once it has ended
            async with asyncio.timeout(2 * STREAM_TIMEOUT):
                out, err = await chat.communicate()
                seen = await tab.read_turn(
                    time.monotonic(), STREAM_TIMEOUT, lambda f, _: frames.append(f)
                )
        finally:
            if chat.returncode is None:
                chat.kill()
                await chat.wait()
            await tab.close()
    assert chat.returncode == 0, err.decode()
    assert out.decode() == REPLY + "\n"
    assert f"through the server at 127.0.0.1:{worker.port}" in err.decode()
    assert seen.status == "complete", seen
    # The tab saw the reply grow: a frame with part of it came before the finished one.
    partial = [f for f in frames[:-1] if "word0" in f and "word39" not in frame_text(f)]
    assert partial, "the tab saw no part of the reply before it ended"
    stored = _messages(Path(environ["ACDC_DATA_DIR"]), session_id)
    assert stored[-2:] == [("user", "tell me", seen.turn_id), ("assistant", REPLY, seen.turn_id)]


def test_the_server_s_answer_is_the_in_process_answer_for_a_bad_path(served):
    _, environ, _ = served
    result = _chat(environ, "--add", "missing.py", "hi")
    assert result.returncode == 2
    assert "missing.py: no such file" in result.stderr
    assert "through the server" in result.stderr


def test_a_run_file_whose_server_is_gone_is_removed_and_the_chat_runs_here(tmp_path):
    environ = _own_repository(tmp_path)
    dead = subprocess.Popen(["true"])
    dead.wait()
    _write_run_file(environ, pid=dead.pid, port=_closed_port())
    result = _chat(environ, "--model", "acdc/dry-run", "hi")
    assert result.returncode == 0, result.stderr
    assert "Dry run" in result.stdout
    assert f"(pid {dead.pid}) is gone; chatting in this process" in result.stderr
    assert runfile.read(Path(environ["ACDC_DATA_DIR"])) is None


def test_a_run_file_whose_port_is_closed_sends_the_chat_back_here(tmp_path):
    environ = _own_repository(tmp_path)
    port = _closed_port()
    _write_run_file(environ, pid=os.getpid(), port=port)  # a live pid, no server
    result = _chat(environ, "--model", "acdc/dry-run", "hi")
    assert result.returncode == 0, result.stderr
    assert "Dry run" in result.stdout
    assert f"no answer from the server at 127.0.0.1:{port}" in result.stderr
    assert "chatting in this process" in result.stderr


def test_a_port_that_never_answers_sends_the_chat_back_here(tmp_path):
    environ = _own_repository(tmp_path)
    with socket.socket() as silent:  # accepts connections (the backlog) and says nothing
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        _write_run_file(environ, pid=os.getpid(), port=silent.getsockname()[1])
        result = _chat(environ, "--model", "acdc/dry-run", "hi")
    assert result.returncode == 0, result.stderr
    assert "Dry run" in result.stdout
    assert "timed out; chatting in this process" in result.stderr


def test_a_stopped_server_leaves_no_run_file_and_the_chat_runs_here(tmp_path):
    repo = make_repo(tmp_path / "repo", files=1)
    environ = server_environ(repo, tmp_path / "data", {})
    worker = start_worker(environ, tmp_path / "serve.log")
    run = runfile.read(tmp_path / "data")
    assert run is not None and run.port == worker.port and run.pid == worker.process.pid
    assert (tmp_path / "data" / runfile.NAME).stat().st_mode & 0o077 == 0
    worker.stop()
    assert runfile.read(tmp_path / "data") is None
    result = _chat(environ, "--model", "acdc/dry-run", "hi")
    assert result.returncode == 0, result.stderr
    assert "Dry run" in result.stdout
    assert "server" not in result.stderr


def _own_repository(tmp_path: Path) -> dict[str, str]:
    environ = server_environ(make_repo(tmp_path / "repo", files=1), tmp_path / "data", {})
    (tmp_path / "data").mkdir()
    return environ


def _write_run_file(environ: dict[str, str], *, pid: int, port: int) -> None:
    run = runfile.RunFile("127.0.0.1", port, pid, environ["ACDC_REPO"], "a-token")
    path = Path(environ["ACDC_DATA_DIR"]) / runfile.NAME
    path.write_text(json.dumps(run.__dict__))


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed again when the block ends


def _messages(data_dir: Path, session_id: str) -> list[tuple[str, str, str]]:
    with sqlite3.connect(data_dir / "acdc.sqlite3") as database:
        rows = database.execute(
            "SELECT role, content, turn_id FROM history_message WHERE session_id = ? "
            "AND system_event = 0 ORDER BY seq",
            (session_id,),
        )
        return list(rows)
