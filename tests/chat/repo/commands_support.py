"""Helpers of the command tests: a loopback listener that counts who connects, and a look at
the machine's process table for a process by a unique word in its command line."""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path

# The interpreter itself, not a virtualenv's link to it: a checkout under /tmp (its .venv
# with it) is hidden by the sandbox's private /tmp, the interpreter it links to is not.
PYTHON = os.path.realpath(sys.executable)
PROC = Path("/proc")


class Listener:
    """A TCP socket listening on 127.0.0.1; `connected()` says whether anyone came."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.setblocking(False)
        self.port = self.sock.getsockname()[1]

    def connected(self) -> bool:
        try:
            peer, _ = self.sock.accept()
        except BlockingIOError:
            return False
        peer.close()
        return True

    def close(self) -> None:
        self.sock.close()


def connect_code(port: int) -> str:
    """Python that connects to the listener, and says whether it could."""
    return (
        "import socket\n"
        "try:\n"
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=5).close()\n"
        "    print('connected')\n"
        "except OSError as exc:\n"
        "    print('refused', exc)\n"
    )


def pids_with(word: str) -> list[int]:
    """Living processes (not zombies) whose command line holds `word`."""
    found = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if word.encode() in cmdline and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def wait_until_gone(word: str, within: float = 10.0) -> list[int]:
    """The processes holding `word` still alive once they are gone or `within` passed
    (SIGKILL is delivered by the kernel after killpg returns)."""
    deadline = time.monotonic() + within
    while (alive := pids_with(word)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return alive
