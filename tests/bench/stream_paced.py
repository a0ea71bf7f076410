"""A reply streamed at a provider's pace through `acdc serve`: server CPU and bytes written.

One `acdc serve` on SQLite with the fake model scripted to answer a ~15 KB code-heavy reply
(`stream_bench.code_heavy_answer`) in 40-character chunks 0.12 s apart (~330 characters a
second, ~45 s), read over a real websocket as the page does. The server's CPU (utime +
stime) and its /proc/<pid>/io are read after a warm-up turn and once the reply has
finished and the after-turn work has settled (io unchanged for a second): `write_bytes` is
what reached the disk, `wchar` every byte handed to write() (the socket's frames
included). Goals (issue 24): disk writes ≤ 40x the reply, CPU ≤ 0.8 s. Figures only.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

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


def paced_rows(folder: Path, repo: Path, size_kb: float = 15, quick: bool = False) -> list:
    answer = code_heavy_answer(2 if quick else size_kb)
    script = folder / "fake-script.json"
    script.write_text(json.dumps([{"text": "Warm.", "chunk_size": CHUNK}, _step(answer)]))
    environ = server_environ(repo, folder / "data", {"ACDC_FAKE_SCRIPT": str(script)})
    worker = start_worker(environ, folder / "paced-server.log")
    try:
        return [asyncio.run(_measure(worker, answer))]
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
        cpu, io = worker.cpu_seconds(), _io(worker)
        outcome = await socket.turn("Show me the whole change.", 600.0)
        after = await _settled(worker)
        cpu = worker.cpu_seconds() - cpu
        await socket.close()
    reply = len(answer.encode())
    written = after["write_bytes"] - io["write_bytes"]
    return {
        "reply": f"{reply / 1024:.1f} KB",
        "status": outcome.status,
        "streamed": f"{outcome.seconds:.1f} s",
        "server CPU": f"{cpu:.2f} s (goal ≤ {GOAL_CPU_SECONDS} s)",
        "disk writes": f"{written / 1024:,.0f} KB = {written / reply:.1f}x the reply "
        f"(goal ≤ {GOAL_WRITE_RATIO}x)",
        "wchar": f"{(after['wchar'] - io['wchar']) / 1024:,.0f} KB",
        "frames": outcome.frames,
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
