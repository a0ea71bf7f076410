"""A reply streamed at a provider's pace through `acdc serve`: server CPU and bytes written.

One `acdc serve` on SQLite with the fake model scripted to answer a ~15 KB code-heavy reply
(`stream_bench.code_heavy_answer`) in 40-character chunks 0.12 s apart (~330 characters a
second, ~45 s), read over a real websocket as the page does. The server's CPU (utime +
stime) and its /proc/<pid>/io are read after a warm-up turn and once the reply has
finished and the after-turn work has settled (io unchanged for a second): `write_bytes` is
what reached the disk, `wchar` every byte handed to write() (the socket's frames
included). The wire is every frame of the turn the socket read, against the reply rendered
whole; the load average is the machine's at the start and the end of the reply. Goals
(issue 24): disk writes ≤ 40x the reply, CPU ≤ 0.8 s (≤ 2 s for 60 KB), at most 20 frames
a second. Figures only.

The same code costs more CPU when its work comes in small pieces with the core idle in
between (caches and branch predictors go cold, more so when other guests share the host),
and how much more changes by the hour on these machines: the same commit's 15 KB figure
read 0.85 s and 2.3 s an hour apart. So each row also names the machine's pace penalty at
that moment: a fixed piece of Python work timed back to back and with the reply's 0.12 s
between pieces (`pace_penalty`).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from pathlib import Path
from typing import Any

from history.markup.render import render_markdown
from tests.bench.stream_bench import code_heavy_answer
from tests.bench.turn_server import (
    ChatSocket,
    Worker,
    http_client,
    new_session,
    server_environ,
    start_worker,
)

CHUNK = 40
DELAY = 0.12
GOAL_WRITE_RATIO = 40
GOAL_CPU_SECONDS = 0.8
GOAL_CPU_SECONDS_60KB = 2.0


def paced_rows(
    folder: Path, repo: Path, sizes_kb: tuple[float, ...] = (15, 60), quick: bool = False
) -> list:
    """One row per reply size, each from a server of its own."""
    sizes = (2,) if quick else sizes_kb
    rows = []
    for size in sizes:
        row = _paced_row(folder / f"{size:g}kb", repo, size)
        row["pace penalty"] = pace_penalty(pieces=20 if quick else 100)
        rows.append(row)
    return rows


def pace_penalty(pieces: int = 100) -> str:
    """CPU per piece of fixed work when the pieces come DELAY apart, against back to back."""
    text = "def step(tokens: int) -> int:\n    return tokens * 2  # doubled\n" * 20
    pattern = re.compile(r"(\w+)\(([^)]*)\)")

    def piece() -> None:
        for _ in range(5):
            data = json.loads(json.dumps({"delta": text, "n": [1, 2, 3]}))
            pattern.findall(data["delta"])

    async def timed(delay: float) -> float:
        start = time.process_time()
        for _ in range(pieces):
            piece()
            if delay:
                await asyncio.sleep(delay)
        return (time.process_time() - start) / pieces

    back_to_back = asyncio.run(timed(0))
    paced = asyncio.run(timed(DELAY))
    return f"{paced / back_to_back:.1f}x ({paced * 1e3:.2f} / {back_to_back * 1e3:.2f} ms)"


def _paced_row(folder: Path, repo: Path, size_kb: float) -> dict[str, Any]:
    folder.mkdir(parents=True, exist_ok=True)
    answer = code_heavy_answer(size_kb)
    script = folder / "fake-script.json"
    script.write_text(json.dumps([{"text": "Warm.", "chunk_size": CHUNK}, _step(answer)]))
    environ = server_environ(repo, folder / "data", {"ACDC_FAKE_SCRIPT": str(script)})
    worker = start_worker(environ, folder / "paced-server.log")
    try:
        return asyncio.run(_measure(worker, answer))
    finally:
        worker.stop()


def _step(answer: str) -> dict[str, Any]:
    return {"text": answer, "chunk_size": CHUNK, "chunk_delay": DELAY}


async def _measure(worker: Worker, answer: str) -> dict[str, Any]:
    async with http_client() as http:
        session_id = await new_session(http, worker.url)
        socket = await ChatSocket.open(http, worker.url, session_id)
        await socket.turn("Warm up, please.", 120.0)  # imports, first queries, templates
        await _settled(worker)
        cpu, io, load = worker.cpu_seconds(), _io(worker), os.getloadavg()[0]
        outcome = await socket.turn("Show me the whole change.", 600.0)
        load_end = os.getloadavg()[0]
        after = await _settled(worker)
        cpu = worker.cpu_seconds() - cpu
        await socket.close()
    reply = len(answer.encode())
    written = after["write_bytes"] - io["write_bytes"]
    rendered = len(render_markdown(answer).encode())
    goal = GOAL_CPU_SECONDS if reply < 30 * 1024 else GOAL_CPU_SECONDS_60KB
    return {
        "reply": f"{reply / 1024:.1f} KB",
        "status": outcome.status,
        "streamed": f"{outcome.seconds:.1f} s",
        "server CPU": f"{cpu:.2f} s (goal ≤ {goal:g} s)",
        "disk writes": f"{written / 1024:,.0f} KB = {written / reply:.1f}x the reply "
        f"(goal ≤ {GOAL_WRITE_RATIO}x)",
        "wchar": f"{(after['wchar'] - io['wchar']) / 1024:,.0f} KB",
        "frames": outcome.frames,
        "frames/s": f"{outcome.frames / outcome.seconds:.1f} (≤ 20)",
        "wire / rendered": f"{outcome.wire_bytes / 1024:,.0f} / {rendered / 1024:,.0f} KB = "
        f"{outcome.wire_bytes / rendered:.2f}x",
        "load average": f"{load:.2f} → {load_end:.2f}",
    }


def _io(worker: Worker) -> dict[str, int]:
    lines = Path(f"/proc/{worker.process.pid}/io").read_text().splitlines()
    return {k: int(v) for k, v in (line.split(": ") for line in lines)}


async def _settled(worker: Worker, quiet: float = 1.0, limit: float = 30.0) -> dict[str, int]:
    """The server's io once it has written nothing for `quiet` seconds (or after `limit`)."""
    last, since, deadline = _io(worker), time.monotonic(), time.monotonic() + limit
    while time.monotonic() < deadline:
        await asyncio.sleep(0.2)
        now = _io(worker)
        if now["write_bytes"] != last["write_bytes"]:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            break
    return last
