"""The git processes acdc starts for a commit, and the index lock a dead one of them left.

Git takes `index.lock` beside the index while it writes it and removes it when done; a git
killed meanwhile (acdc killed with it, during a slow pre-commit hook) leaves the lock, and
every later git that writes the index refuses to run. `run` records each git it starts in
acdc's data folder (pid, the process's start tick, the wall time just before it started)
and forgets it once the git ends; a record that outlives its git is a git of acdc's that
died. `clear_stale` removes the lock only when such a record proves it was that git's: the
recorded process gone (no process with that pid and start tick) and the lock made after
that git started. Any other lock is left alone and `lock_held` names it with the command
that removes it. Only the standard library: a test runs this in a process it kills.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
from pathlib import Path

RECORDS = "git-runs"  # the data folder's subfolder of running gits, one file each
# A file's times come from the kernel's coarse clock, a tick behind time.time(): a lock
# the git made just after it started can look older than the start by a few milliseconds.
CLOCK_SLACK = 1.0


def run(
    root: Path, args: list[str], *, records: Path, stdin: bytes | None, timeout: float
) -> subprocess.CompletedProcess:
    """`git args` in `root`, as `subprocess.run(..., capture_output=True)` would, recorded
    in `records` while it runs."""
    records.mkdir(mode=0o700, parents=True, exist_ok=True)
    started = time.time()
    process = subprocess.Popen(
        ["git", "-C", str(root), *args],
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    record = records / f"{process.pid}.json"
    mark = {"pid": process.pid, "tick": _start_tick(process.pid), "started": started}
    record.write_text(json.dumps({**mark, "root": str(root)}))
    try:
        out, err = process.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
    finally:
        record.unlink(missing_ok=True)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def index_lock(root: Path) -> Path:
    """The lock of the repository's index (a worktree's own, where it has one)."""
    found = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--git-path", "index.lock"],
        capture_output=True,
        text=True,
        check=False,
    )
    named = found.stdout.strip() if found.returncode == 0 else ".git/index.lock"
    return (root / named).resolve()


def clear_stale(root: Path, records: Path) -> bool:
    """Remove the index lock when a git of acdc's that died left it; True if removed.
    Records of gits that ended are removed on the way."""
    lock = index_lock(root)
    removed = False
    for record in _records(records):
        if Path(record.get("root", "")).resolve() != root.resolve():
            continue
        if _alive(record):
            continue
        try:
            made = lock.stat().st_mtime
            if made >= record["started"] - CLOCK_SLACK:
                lock.unlink()
                removed = True
        except FileNotFoundError:
            pass
        (records / f"{record['pid']}.json").unlink(missing_ok=True)
    return removed


def lock_held(root: Path, records: Path) -> str:
    """What to tell the person when the index lock stops git, or "" without a lock."""
    lock = index_lock(root)
    if not lock.exists():
        return ""
    mine = [r for r in _records(records) if Path(r.get("root", "")).resolve() == root.resolve()]
    running = [record["pid"] for record in mine if _alive(record)]
    if running:
        return (
            f"{lock} is held by a git acdc started (pid {running[0]}), still running, maybe "
            "in a hook; wait for it to end, or end it, and commit again"
        )
    return (
        f"{lock} exists: another git may be running in this repository; if none is, remove "
        f"it (rm {shlex.quote(str(lock))}) and commit again"
    )


def _records(records: Path) -> list[dict]:
    found = []
    for path in sorted(records.glob("*.json")) if records.is_dir() else []:
        try:
            record = json.loads(path.read_text())
            int(record["pid"]), float(record["started"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # being written, or not ours: never grounds for removing a lock
        found.append(record)
    return found


def _alive(record: dict) -> bool:
    """Whether the recorded git still runs: its pid names a process started at its tick
    (without /proc, as on macOS, any process with its pid counts as alive)."""
    pid = int(record["pid"])
    if record.get("tick") is None:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return _start_tick(pid) == record["tick"]


def _start_tick(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (/proc/<pid>/stat, field 22),
    which tells a process from a later one given the same pid; None when none runs."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    return int(fields[19]) if len(fields) > 19 and fields[0] != "Z" else None
