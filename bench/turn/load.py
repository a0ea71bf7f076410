"""`acdc bench turn --part load`: many sessions chatting at once over websockets.

Each setup starts its workers (`acdc serve` processes on one repository: SQLite with one
worker, or PostgreSQL + Redis with one or more sharing DATABASE_URL and REDIS_URL, on a
PostgreSQL database made for the run and dropped after it), makes the sessions over HTTP
as the New session button does (spread over the workers), opens one websocket per session
and has every session send its turns one after another, all sessions at once. The fake
model echoes the message (a fast answer of ~100 characters). Measured: turns per second
over the whole run, latency from sending to the finished frame, errors (error frames,
timeouts, closed sockets), the CPU seconds of the workers, PostgreSQL, Redis and this
client, and PostgreSQL's sessions and transactions and Redis's commands per turn.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp
import psycopg
import redis

from bench.live_server import (
    ChatSocket,
    TurnOutcome,
    Worker,
    http_client,
    new_session,
    server_environ,
    service_cpu_seconds,
    start_worker,
)
from bench.report import markdown_table, percentile

BENCH_DATABASE = "acdc_bench_turn"
TURN_TIMEOUT = 120.0


@dataclass(frozen=True)
class Setup:
    name: str
    workers: int = 1
    database_url: str = ""  # empty: SQLite in the data folder
    redis_url: str = ""
    extra: tuple[tuple[str, str], ...] = ()  # more server settings, for experiments


@dataclass
class LoadResult:
    setup: Setup
    sessions: int
    turns: int
    wall_s: float = 0.0
    latencies: list[float] = field(default_factory=list)
    errors: Counter = field(default_factory=Counter)
    error_samples: list[str] = field(default_factory=list)
    cpu_s: dict[str, float] = field(default_factory=dict)
    services: dict[str, int] = field(default_factory=dict)  # PostgreSQL and Redis counters
    frames: int = 0  # received by the clients during the completed turns
    wire_bytes: int = 0

    @property
    def completed(self) -> int:
        return len(self.latencies)

    @property
    def turns_per_s(self) -> float:
        return self.completed / self.wall_s if self.wall_s else 0.0

    def as_data(self) -> dict[str, Any]:
        return {
            "setup": self.setup.name,
            "workers": self.setup.workers,
            "settings": dict(self.setup.extra),
            "sessions": self.sessions,
            "turns_per_session": self.turns,
            "completed": self.completed,
            "wall_s": round(self.wall_s, 2),
            "turns_per_s": round(self.turns_per_s, 2),
            "p50_s": round(percentile(self.latencies, 50), 3),
            "p95_s": round(percentile(self.latencies, 95), 3),
            "errors": dict(self.errors),
            "error_samples": self.error_samples[:5],
            "cpu_s": {k: round(v, 1) for k, v in self.cpu_s.items()},
            "services": self.services,
            "frames_per_turn": round(self.frames / max(1, self.completed), 1),
            "wire_bytes_per_turn": round(self.wire_bytes / max(1, self.completed)),
        }


def fresh_database(url: str) -> str:
    """A new, empty PostgreSQL database of this run's own on the server `url` points at
    (named after the process, so runs side by side never share one); its URL."""
    name = f"{BENCH_DATABASE}_{os.getpid()}"
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(urlsplit(url)._replace(path="/" + name))


def drop_database(server_url: str, database_url: str) -> None:
    name = urlsplit(database_url).path.lstrip("/")
    with psycopg.connect(server_url, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def run_load(folder: Path, repo: Path, setup: Setup, sessions: int, turns: int) -> LoadResult:
    extra = dict(setup.extra)
    if setup.database_url:
        extra["DATABASE_URL"] = fresh_database(setup.database_url)
    if setup.redis_url:
        extra["REDIS_URL"] = setup.redis_url
    environ = server_environ(repo, folder / "data", extra)
    workers: list[Worker] = []
    try:
        for n in range(setup.workers):  # one at a time: the first one migrates
            workers.append(start_worker(environ, folder / f"worker-{n}.log"))
        before = _service_counters(extra)
        result = asyncio.run(_drive(workers, setup, sessions, turns))
        after = _service_counters(extra)
    finally:
        for worker in workers:
            worker.stop()
        if setup.database_url:
            drop_database(setup.database_url, extra["DATABASE_URL"])
    result.services = {name: after[name] - before[name] for name in after}
    return result


def _service_counters(extra: dict[str, str]) -> dict[str, int]:
    """PostgreSQL's sessions and transactions in the bench database, and the commands
    Redis processed (anyone's: Redis has no per-client count)."""
    found = {}
    if "DATABASE_URL" in extra:
        # PostgreSQL publishes a backend's counters at most once a second (PGSTAT_MIN_INTERVAL);
        # this is the bench reading figures after the run, not a test waiting on an event.
        time.sleep(1.0)
        with psycopg.connect(extra["DATABASE_URL"]) as connection:
            row = connection.execute(
                "SELECT sessions, xact_commit + xact_rollback FROM pg_stat_database "
                "WHERE datname = current_database()"
            ).fetchone()
        found["postgres sessions"], found["postgres transactions"] = row
    if "REDIS_URL" in extra:
        stats = redis.Redis.from_url(extra["REDIS_URL"]).info("stats")
        found["redis commands"] = stats["total_commands_processed"]
    return found


async def _drive(workers: list[Worker], setup: Setup, sessions: int, turns: int) -> LoadResult:
    result = LoadResult(setup, sessions, turns)
    async with http_client(connections=0) as http:
        await asyncio.gather(*(_warm_up(http, w.url) for w in workers))
        urls = [workers[n % len(workers)].url for n in range(sessions)]
        ids = [await new_session(http, url) for url in urls]
        sockets = [
            await ChatSocket.open(http, url, sid) for url, sid in zip(urls, ids, strict=True)
        ]
        before = _cpu(workers)
        started = time.monotonic()
        await asyncio.gather(*(_chat(s, n, turns, result) for n, s in enumerate(sockets)))
        result.wall_s = time.monotonic() - started
        after = _cpu(workers)
        result.cpu_s = {name: after[name] - before[name] for name in after}
        await asyncio.gather(*(s.close() for s in sockets), return_exceptions=True)
    return result


async def _warm_up(http: aiohttp.ClientSession, url: str) -> None:
    """One turn per worker first: the first one in a process loads litellm (seconds)."""
    socket = await ChatSocket.open(http, url, await new_session(http, url))
    await socket.turn("Warm up.", TURN_TIMEOUT)
    await socket.close()


async def _chat(socket: ChatSocket, number: int, turns: int, result: LoadResult) -> None:
    for turn in range(turns):
        text = f"Session {number}, turn {turn + 1}: what does module_{turn % 3:03} do?"
        outcome = await socket.turn(text, TURN_TIMEOUT)
        if outcome.status == "complete":
            result.latencies.append(outcome.seconds)
            result.frames += outcome.frames
            result.wire_bytes += outcome.wire_bytes
            continue
        _record_error(result, outcome, number, turn)
        if outcome.status in ("timeout", "closed"):
            return  # this session's later turns cannot run on this socket


def _record_error(result: LoadResult, outcome: TurnOutcome, number: int, turn: int) -> None:
    result.errors[outcome.status] += 1
    result.error_samples.append(f"session {number} turn {turn + 1}: {outcome.detail}")


def _cpu(workers: list[Worker]) -> dict[str, float]:
    found = {f"worker {n + 1}": w.cpu_seconds() for n, w in enumerate(workers)}
    found["postgres"] = service_cpu_seconds("postgres")
    found["redis"] = service_cpu_seconds("redis-server")
    found["client"] = time.process_time()
    return found


def load_markdown(results: list[LoadResult]) -> str:
    rows = []
    for result in results:
        data = result.as_data()
        errors = sum(result.errors.values())
        detail = ", ".join(f"{n} {kind}" for kind, n in sorted(result.errors.items()))
        cpu = ", ".join(f"{name} {s:.1f}" for name, s in data["cpu_s"].items())
        done = max(1, result.completed)
        wire = f"{result.frames / done:.1f} frames, {result.wire_bytes / done / 1024:.1f} KB"
        counts = ", ".join(
            [wire] + [f"{n / done:.1f} {name}" for name, n in result.services.items()]
        )
        rows.append(
            [
                result.setup.name,
                f"{result.completed:,} / {result.sessions * result.turns:,}",
                f"{result.turns_per_s:.1f}",
                f"{data['p50_s']:.2f} s",
                f"{data['p95_s']:.2f} s",
                f"{errors} ({detail})" if errors else "0",
                cpu,
                counts,
            ]
        )
    header = [
        "setup",
        "turns done",
        "turns/s",
        "p50",
        "p95",
        "errors",
        "CPU s during the run",
        "per turn",
    ]
    return markdown_table(header, rows, "lrrrrlll") + "\n\n" + _verdict(results)


def _verdict(results: list[LoadResult]) -> str:
    errors = sum(sum(r.errors.values()) for r in results)
    lines = [f"Errors in all setups: {errors} (goal 0: {'met' if errors == 0 else 'NOT met'})."]
    one = next((r for r in results if r.setup.workers == 1 and not r.setup.database_url), None)
    two = next((r for r in results if r.setup.workers == 2), None)
    if one and two and one.turns_per_s:
        ratio = two.turns_per_s / one.turns_per_s
        verdict = "met" if ratio >= 1.5 else "NOT met"
        lines.append(
            f"{two.setup.name} vs {one.setup.name}: {ratio:.2f}x (goal ≥ 1.5x: {verdict})."
        )
    return " ".join(lines)
