"""A server killed with SIGKILL while it parses the repository leaves no process behind:
its parsing workers die with it, and so does multiprocessing's resource tracker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from bench.live_server import free_port
from tests.test_serve_startup import _environ

FILES = 1500  # enough for the start-up map to parse in worker processes for a while
WAIT = 120.0  # s, for a condition to come true on a busy machine (polled, not slept)


def _repo(root: Path) -> Path:
    for n in range(FILES):
        folder = root / f"pkg{n % 30}"
        folder.mkdir(parents=True, exist_ok=True)
        body = "".join(
            f"def function_{n}_{k}(value: int, other: str = 'x') -> int:\n"
            f"    return helper_{k}(value) + len(other)\n\n"
            for k in range(40)
        )
        (folder / f"module_{n}.py").write_text(f"class Thing{n}:\n    pass\n\n{body}")
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@localhost"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "files"], check=True)
    return root


def _parents() -> dict[int, int]:
    """pid -> parent pid of every live (not zombie) process."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        state, ppid = stat.rpartition(")")[2].split()[:2]
        if state not in ("Z", "X"):
            found[int(entry)] = int(ppid)
    return found


def _descendants(pid: int) -> set[int]:
    parents = _parents()
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier}
        found |= frontier
    return found


def _until(condition, what: str):
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.01)  # polling a condition, not waiting for time to pass
    raise AssertionError(f"not within {WAIT:.0f} s: {what}")


def test_a_server_killed_while_parsing_leaves_no_process_behind(tmp_path):
    repo = _repo(tmp_path / "repo")
    command = [sys.executable, "-m", "acdc", "serve", "--port", str(free_port())]
    log = (tmp_path / "server.log").open("w")
    server = subprocess.Popen(
        command, env=_environ(repo, tmp_path / "data"), stdout=log, stderr=subprocess.STDOUT
    )
    try:
        workers = _until(
            lambda: {p for p in _descendants(server.pid) if _is_worker(p)},
            "the start-up map's parsing workers started",
        )
        left = _descendants(server.pid)
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=WAIT)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        log.close()
    assert workers
    try:
        _until(lambda: not (left & set(_parents())), f"the server's processes {left} ended")
    finally:  # a failure must not leave them running either
        for pid in left & set(_parents()):
            os.kill(pid, signal.SIGKILL)


def _is_worker(pid: int) -> bool:
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"spawn_main" in command
