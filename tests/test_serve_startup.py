"""What `acdc serve` says before it serves: a port in use is one error line and no
"serving" line; a folder that is not a git repository is served after a one-line warning."""

from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from bench.live_server import free_port, interruptible

START_TIMEOUT = 120.0


def _environ(repo: Path, data: Path) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ACDC_")}
    environ.pop("DJANGO_SETTINGS_MODULE", None)
    environ.pop("DATABASE_URL", None)
    environ.update(ACDC_REPO=str(repo), ACDC_DATA_DIR=str(data), ACDC_MODEL="acdc/fake")
    return environ | {"PYTHONUNBUFFERED": "1"}


def test_a_port_in_use_is_one_error_line_before_any_serving_line(root, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "acdc", "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            env=_environ(root, tmp_path / "data"),
            timeout=START_TIMEOUT,
        )
    assert result.returncode != 0
    assert result.stderr.strip() == (
        f"acdc: error: port {port} on 127.0.0.1 is in use (another acdc serve, or another "
        "program); stop it or choose another port with --port"
    )
    assert "serving" not in result.stdout


def test_a_folder_that_is_not_a_git_repository_is_served_after_a_warning(root, tmp_path):
    command = [sys.executable, "-m", "acdc", "serve", "--port", str(free_port())]
    server = subprocess.Popen(
        command,
        env=_environ(root, tmp_path / "data"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=interruptible,
    )
    try:
        lines = _lines_until(server, "acdc: serving")
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)
        server.stdout.close()
    assert lines[0] == (
        f"acdc: warning: {root} is not a git repository; serving it as a plain folder "
        "(no git status; every file in it is listed, .gitignore not applied)"
    )
    assert lines[-1].startswith(f"acdc: serving {root} at http://127.0.0.1:")


def _lines_until(process: subprocess.Popen, prefix: str) -> list[str]:
    """The process's output lines up to the first that starts with `prefix`."""
    found: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        for line in process.stdout:
            found.put(line.rstrip("\n"))
        found.put(None)  # the process closed its output

    threading.Thread(target=read, daemon=True).start()
    lines: list[str] = []
    deadline = time.monotonic() + START_TIMEOUT
    while not lines or not lines[-1].startswith(prefix):
        try:
            line = found.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            line = None
        if line is None:
            raise AssertionError(f"no line starting {prefix!r} in:\n" + "\n".join(lines))
        lines.append(line)
    return lines
