"""Ctrl-C of `acdc serve` while the model's command runs: the server stops, and the command
and the child it started (a sleep of 1,000 s, in real bubblewrap) stop with it."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import uuid

from bench.live_server import (
    ChatSocket,
    http_client,
    make_repo,
    new_session,
    server_environ,
    start_worker,
)
from tests.chat.repo.commands_support import PYTHON, pids_with, wait_until_gone
from tests.chat.sockets import WAIT


async def test_ctrl_c_of_the_server_kills_a_running_command_and_its_child(tmp_path):
    word = f"acdc-interrupt-{uuid.uuid4().hex}"
    script = tmp_path / "fake-script.json"
    script.write_text(
        json.dumps([{"tool_calls": [{"name": "run_command", "arguments": {"name": "serve"}}]}])
    )
    repo, data = make_repo(tmp_path / "repo", files=1), tmp_path / "data"
    environ = server_environ(repo, data, {"ACDC_FAKE_SCRIPT": str(script)})
    child = f"{PYTHON} -c 'import time; time.sleep(1000)' {word}"
    declared = subprocess.run(
        [sys.executable, "-m", "acdc", "commands", "add", "serve", "--", "sh", "-c",
         f"{child} & wait"],
        env=environ, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert declared.returncode == 0, declared.stderr
    worker = start_worker(environ, tmp_path / "serve.log")
    try:
        async with http_client() as http:
            session_id = await new_session(http, worker.url)
            socket = await ChatSocket.open(http, worker.url, session_id)
            await socket.send_message("start the server")
            async with asyncio.timeout(WAIT):
                while not pids_with(word):
                    assert worker.process.poll() is None, worker.log.read_text()[-3000:]
                    await asyncio.sleep(0.05)
            worker.process.send_signal(signal.SIGINT)
            await asyncio.to_thread(worker.process.wait, WAIT)
    finally:
        worker.stop()
    assert wait_until_gone(word) == [], worker.log.read_text()[-3000:]
