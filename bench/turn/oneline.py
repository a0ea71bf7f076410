"""`acdc bench turn --part oneline`: a one-line reply's turn beside the bare relays.

Issue 42 item 13: what a short turn costs over a bare relay is acdc's fixed cost per turn
(opening the turn, its saves, the HUD, its frames), since the reply itself is one line.
Three servers run at once, each a process of its own with a loopback provider of its own
(`bench.wirefakes.replay.ReplayFake`, OpenAI format, the one line in one event, no
delay): `acdc serve` (its model pointed at the provider through ACDC_API_BASE, one
session's socket read as the page reads it) and `bench.stream.relay` with litellm and with
httpx. After two warm-up turns each, the turns go round the servers in rotated order, one
turn of one server at a time, so a slow minute of the shared machine lands on all three.
Per turn and server: CPU (the sum of the threads' run time from /proc/PID/task/*/schedstat,
in nanoseconds, from sending the message until the server has used no CPU tick for a
second, after-turn work included), the wall time until the finished frame (or "[done]"),
bytes written (/proc/PID/io: `write_bytes`, what the process sent towards the disk, and
`wchar`, every byte it handed to write()), and for acdc the growth of its SQLite file and
write-ahead log. Each server's idle CPU per second (measured before the turns, the file
watcher and the open page's timers) is given too, as part of every turn's idle second
is that. Figures, never assertions.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from bench.live_server import (
    ChatSocket,
    Worker,
    http_client,
    new_session,
    server_environ,
    start_worker,
)
from bench.stream.sidebyside import MODELS, idle_cpu, relayed, start_relay
from bench.wirefakes.replay import Recording, ReplayFake
from bench.wirefakes.replies import Reply, openai_chunks

SERVERS = ("acdc", "litellm relay", "httpx relay")
REFERENCE = "litellm relay"
LINE = "Done: `step` now returns the doubled count, and its test passes."
QUESTION = "Make step return the doubled count."
WARM_TURNS = 2
IDLE_SAMPLE = 5.0  # seconds of idle measured before the turns
GOAL_CPU, GOAL_WRITTEN = 1.5, 8 * 1024


@dataclass
class Turn:
    cpu: float
    seconds: float
    write_bytes: int
    wchar: int
    store: int = 0  # growth of acdc's SQLite file + WAL
    status: str = "done"


@dataclass
class Served:
    name: str
    worker: Worker
    provider: ReplayFake
    ask: Callable[[str], Awaitable[str]]  # sends one message, returns the turn's status
    close: Callable[[], Awaitable[None]]
    store: Path | None = None
    turns: list[Turn] = field(default_factory=list)
    idle_ms_per_s: float = 0.0
    requests_before: int = 0


def task_cpu(pid: int) -> float:
    """Seconds all the live threads of `pid` have run (schedstat: nanoseconds)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return total / 1e9


def io_counters(pid: int) -> dict[str, int]:
    found = {}
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        name, _, value = line.partition(":")
        found[name] = int(value)
    return found


def store_size(path: Path | None) -> int:
    if path is None:
        return 0
    files = (path, path.with_name(path.name + "-wal"))
    return sum(p.stat().st_size for p in files if p.exists())


def oneline(folder: Path, repo: Path, turns: int = 20) -> list[dict[str, Any]]:
    """One row per server: medians over `turns` one-line turns, all in one run."""
    return asyncio.run(_run(folder, repo, turns))


async def _run(folder: Path, repo: Path, turns: int) -> list[dict[str, Any]]:
    folder.mkdir(parents=True, exist_ok=True)
    servers: list[Served] = []
    async with http_client() as http, aiohttp.ClientSession() as plain:
        try:
            for name in SERVERS:
                servers.append(await _start(name, folder / name.split()[0], repo, http, plain))
            for server in servers:
                for _ in range(WARM_TURNS):
                    await server.ask(QUESTION)
                    await idle_cpu(server.worker)
            for server in servers:
                server.idle_ms_per_s = await _idle_rate(server.worker)
                server.requests_before = len(server.provider.requests)
            for n in range(turns):
                k = n % len(servers)
                for server in servers[k:] + servers[:k]:
                    server.turns.append(await _measured(server))
        finally:
            for server in servers:
                await server.close()
                server.worker.stop()
                server.provider.close()
    return _rows(servers, turns)


async def _start(name: str, folder: Path, repo: Path, http: aiohttp.ClientSession, plain) -> Served:
    folder.mkdir(parents=True, exist_ok=True)
    provider = ReplayFake(_recording())
    base = provider.base_url + "/v1"
    keys = {"OPENAI_API_KEY": "sk-bench"}
    if name == "acdc":
        extra = {"ACDC_MODEL": MODELS["openai"], "ACDC_API_BASE": base, **keys}
        worker = start_worker(server_environ(repo, folder / "data", extra), folder / "log")
        session_id = await new_session(http, worker.url)
        socket = await ChatSocket.open(http, worker.url, session_id)

        async def ask(text: str) -> str:
            return (await socket.turn(text, 120.0)).status

        store = folder / "data" / "acdc.sqlite3"
        return Served(name, worker, provider, ask, socket.close, store)
    mode = name.split()[0]
    extra = {"RELAY_MODE": mode, "RELAY_MODEL": MODELS["openai"], "RELAY_API_BASE": base, **keys}
    worker = start_relay(folder / "log", extra)
    address = worker.url.replace("http://", "ws://") + "ws/relay/"
    ws = await plain.ws_connect(address, max_msg_size=0)

    async def ask_relay(text: str) -> str:
        await relayed(ws, text)
        return "done"

    async def close() -> None:
        await ws.close()

    return Served(name, worker, provider, ask_relay, close)


def _recording() -> Recording:
    reply, model = Reply(LINE), MODELS["openai"].split("/", 1)[1]
    usage = {"prompt_tokens": 900, "completion_tokens": reply.output_tokens}
    return Recording(tuple(openai_chunks(reply, model, usage, "000001")))


async def _idle_rate(worker: Worker) -> float:
    await idle_cpu(worker)
    before = task_cpu(worker.process.pid)
    await asyncio.sleep(IDLE_SAMPLE)
    return (task_cpu(worker.process.pid) - before) / IDLE_SAMPLE * 1e3


async def _measured(server: Served) -> Turn:
    pid = server.worker.process.pid
    await idle_cpu(server.worker)
    cpu, io, store = task_cpu(pid), io_counters(pid), store_size(server.store)
    started = time.monotonic()
    status = await server.ask(QUESTION)
    seconds = time.monotonic() - started
    await idle_cpu(server.worker)
    after = io_counters(pid)
    return Turn(
        task_cpu(pid) - cpu,
        seconds,
        after["write_bytes"] - io["write_bytes"],
        after["wchar"] - io["wchar"],
        store_size(server.store) - store,
        status,
    )


def _rows(servers: list[Served], turns: int) -> list[dict[str, Any]]:
    cpu = {s.name: statistics.median(t.cpu for t in s.turns) for s in servers}
    reference = cpu[REFERENCE]
    rows = []
    for server in servers:
        measured = server.turns
        requests = (len(server.provider.requests) - server.requests_before) / turns
        rows.append(
            {
                "server": server.name,
                "CPU per turn (median)": f"{cpu[server.name] * 1e3:.1f} ms",
                "min / max": f"{min(t.cpu for t in measured) * 1e3:.1f} / "
                f"{max(t.cpu for t in measured) * 1e3:.1f}",
                f"÷ {REFERENCE}": f"{cpu[server.name] / reference:.2f}x",
                "idle CPU": f"{server.idle_ms_per_s:.1f} ms/s",
                "wall": f"{statistics.median(t.seconds for t in measured) * 1e3:.0f} ms",
                "write_bytes": _kb(statistics.median(t.write_bytes for t in measured)),
                "wchar": _kb(statistics.median(t.wchar for t in measured)),
                "SQLite + WAL growth": _kb(statistics.median(t.store for t in measured))
                if server.store
                else "–",
                "provider requests": f"{requests:.1f}",
                "status": ", ".join(sorted({t.status for t in measured})),
                "load": f"{os.getloadavg()[0]:.2f}",
            }
        )
    return rows


def _kb(value: float) -> str:
    return f"{value / 1024:.1f} KB"


def goal_line(rows: list[dict[str, Any]]) -> str:
    acdc = next(r for r in rows if r["server"] == "acdc")
    ratio = float(acdc[f"÷ {REFERENCE}"].rstrip("x"))
    written = float(acdc["write_bytes"].split()[0]) * 1024
    verdict = "met" if ratio <= GOAL_CPU else "not met"
    disk = "met" if written <= GOAL_WRITTEN else "not met"
    return (
        f"Goal (issue 42 item 13): acdc ≤ {GOAL_CPU}x the {REFERENCE}'s CPU: {ratio:.2f}x, "
        f"**{verdict}**; ≤ {GOAL_WRITTEN // 1024} KB written per turn: "
        f"{written / 1024:.1f} KB, **{disk}**."
    )
