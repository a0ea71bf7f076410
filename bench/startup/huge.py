"""The start-up benchmark's huge repository: `acdc serve` on N tiny files, cold and warm.

A throwaway git repository of `files` one-function Python files (1,000 a folder, added to
git in one go) is served by `acdc serve` (model acdc/fake, the access token of
bench.live_server): first with an empty data folder (cold: every file parsed), then
restarted with nothing changed (warm: the symbols from `symbols.sqlite3`). Each start is
timed from the launch to the server answering, and a first message is sent at once on a
new session's socket: the seconds to its first frame (the message drawn and the notice
saying what is still being read) and to its reply complete, and when the log said "map
ready". The server is stopped with SIGTERM once the map is ready (so the restart finds
its symbols stored), and the stored reply's status read back. Figures, never assertions.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.live_server import (
    ChatSocket,
    http_client,
    new_session,
    server_environ,
    start_worker,
)
from bench.report import machine_line, markdown_table

PER_FOLDER = 1000
REPLY_WAIT_S = 600.0


def make_huge(root: Path, files: int) -> None:
    for number in range(files):
        folder = root / f"pkg{number // PER_FOLDER}"
        if number % PER_FOLDER == 0:
            folder.mkdir(parents=True)
        (folder / f"m{number % PER_FOLDER}.py").write_text(f"def f{number}():\n    return 1\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)


def start(repo: Path, data: Path, name: str) -> dict[str, Any]:
    """One start: launch → answering, then the first message's first frame and reply."""
    log = data.parent / f"{name}-serve.log"
    launched = time.monotonic()
    worker = start_worker(server_environ(repo, data, {}), log)
    result: dict[str, Any] = {"serving_s": time.monotonic() - launched}
    try:
        result |= asyncio.run(_first_message(worker))
        ready = _map_ready(log)  # so that the restart finds the symbols stored
        result["map_ready_s"] = time.monotonic() - launched
    finally:
        worker.stop()  # SIGTERM
    text = log.read_text(errors="replace")
    result["map"] = ready or "not ready when stopped"
    result["tracebacks"] = text.count("Traceback")
    result["stored"] = _stored_status(data)
    return result


async def _first_message(worker) -> dict[str, Any]:
    async with http_client(worker.token) as http:
        session = await new_session(http, worker.url)
        socket = await ChatSocket.open(http, worker.url, session)
        seen: list[float] = []
        sent = time.monotonic()
        outcome = await socket.turn(
            "What is in pkg7?", REPLY_WAIT_S, lambda frame, at: seen.append(at)
        )
        await socket.close()
    first = seen[0] - sent if seen else None
    return {"first_frame_s": first, "reply_s": outcome.seconds, "status": outcome.status}


def _map_ready(log: Path) -> str:
    """The server log's "map ready" line once it is there (polled: a file, no event)."""
    deadline = time.monotonic() + REPLY_WAIT_S
    while time.monotonic() < deadline:
        found = re.search(r"map ready: (.*)", log.read_text(errors="replace"))
        if found:
            return found.group(1).strip()
        time.sleep(0.2)
    return ""


def _stored_status(data: Path) -> str:
    database = sqlite3.connect(f"file:{data / 'acdc.sqlite3'}?mode=ro", uri=True)
    try:
        row = database.execute(
            "SELECT status FROM history_message WHERE role = 'assistant' ORDER BY rowid DESC"
        ).fetchone()
    finally:
        database.close()
    return row[0] if row else "none"


def measure(files: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="acdc-startup-huge-") as folder:
        repo, data = Path(folder) / "repo", Path(folder) / "data"
        made = time.monotonic()
        make_huge(repo, files)
        making = time.monotonic() - made
        cold = start(repo, data, "cold")
        warm = start(repo, data, "warm")
    return {"files": files, "making_s": making, "cold": cold, "warm": warm}


def huge_markdown(data: dict[str, Any], info: dict[str, Any]) -> str:
    rows = []
    for key, label in (("cold", "first start (empty data folder)"), ("warm", "restart")):
        run = data[key]
        first = run["first_frame_s"]
        rows.append(
            [
                label,
                f"{run['serving_s']:.1f}",
                "-" if first is None else f"{first:.2f}",
                f"{run['reply_s']:.1f} ({run['status']})",
                run["stored"],
                f"{run['map_ready_s']:.1f}",
                run["map"],
                str(run["tracebacks"]),
            ]
        )
    head = [
        "start",
        "launch → answering (s)",
        "send → first frame (s)",
        "send → reply (s)",
        "stored after SIGTERM",
        "launch → map ready (s)",
        "map (server log)",
        "tracebacks",
    ]
    return "\n".join(
        [
            f"## Start-up on {data['files']:,} files (acdc serve, a message sent at once)",
            "",
            markdown_table(head, rows, "lrrrlrll"),
            "",
            f"Making the repository (files and `git add`): {data['making_s']:.1f} s. "
            + machine_line(info)
            + ".",
        ]
    )
