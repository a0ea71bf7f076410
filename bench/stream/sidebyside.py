"""acdc's stream beside the bare relays, against one paced provider, in the same run.

One loopback provider (`bench.wirefakes.replay.ReplayFake`) sends a code-heavy reply
(`stream_bench.code_heavy_answer`, 15 and 60 KB) in 40-character events 0.12 s apart, in
the OpenAI or the Anthropic format. Three servers, each a process of its own, relay it to a
websocket client: `acdc serve` (its model pointed at the provider through ACDC_API_BASE, a
session's socket read as the page reads it), and `bench.stream.relay` with litellm's
`acompletion(stream=True)` and with httpx alone. Each is warmed up with a short reply
first. Rounds run the servers in rotated order, so a slow minute of the shared machine
does not land on one of them only. A server's CPU is its user + system time from
sending the message until it has used none for a second; the table gives the median of
the rounds, its ratio to the litellm relay, the bytes its socket sent and the machine's
pace penalty (`stream_paced.pace_penalty`) at the time. Figures, never assertions.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from bench import CHECKOUT
from bench.live_server import (
    ChatSocket,
    Worker,
    free_port,
    http_client,
    interruptible,
    new_session,
    server_environ,
    start_worker,
)
from bench.stream.paced import CHUNK, DELAY, pace_penalty
from bench.stream.stream_bench import code_heavy_answer
from bench.wirefakes.replay import Recording, ReplayFake, Request
from bench.wirefakes.replies import Reply, anthropic_events, openai_chunks
from history.markup.render import render_markdown

SERVERS = ("acdc", "litellm relay", "httpx relay")
MODELS = {"openai": "openai/gpt-4.1", "anthropic": "anthropic/claude-sonnet-4-5"}
WARM = "Warm up, please."
IDLE = 1.0


@dataclass
class Run:
    cpu: float
    wire: int
    seconds: float
    status: str
    disk: int | None = None  # bytes the server wrote to disk (acdc's store), else None


def side_by_side(
    folder: Path,
    repo: Path,
    sizes_kb: tuple[float, ...] = (15, 60),
    formats: tuple[str, ...] = ("openai", "anthropic"),
    rounds: int = 3,
) -> list[dict[str, Any]]:
    """One row per format, size and server."""
    rows = []
    for api in formats:
        for size in sizes_kb:
            answer = code_heavy_answer(size)
            with ReplayFake() as provider:
                provider.choose = _chooser(api, answer)
                runs = _rounds(folder / f"{api}-{size:g}kb", repo, api, provider, rounds)
            rows += _rows(api, answer, runs)
    return rows


def _chooser(api: str, answer: str):
    long, short = _recording(api, answer), _recording(api, "Warm.")

    def choose(request: Request) -> Recording:
        # The last message is the new one (acdc sends the warm-up turn again as history).
        last = (request.body.get("messages") or [{}])[-1]
        return short if WARM in str(last.get("content")) else long

    return choose


def _recording(api: str, text: str) -> Recording:
    reply, model = Reply(text), MODELS[api].split("/", 1)[1]
    if api == "anthropic":
        usage = {"input_tokens": 900, "output_tokens": reply.output_tokens}
        usage |= {"cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
        parts = anthropic_events(reply, model, usage, "000001")
    else:
        usage = {"prompt_tokens": 900, "completion_tokens": reply.output_tokens}
        parts = openai_chunks(reply, model, usage, "000001")
    return Recording(tuple(parts), delay=DELAY)


def _rounds(
    folder: Path, repo: Path, api: str, provider: ReplayFake, rounds: int
) -> dict[str, list[Run]]:
    folder.mkdir(parents=True, exist_ok=True)
    runs: dict[str, list[Run]] = {name: [] for name in SERVERS}
    for n in range(rounds):
        order = SERVERS[n % 3 :] + SERVERS[: n % 3]
        for name in order:
            runs[name].append(_one(folder / f"{n}-{name.split()[0]}", repo, api, provider, name))
    return runs


def _one(folder: Path, repo: Path, api: str, provider: ReplayFake, name: str) -> Run:
    folder.mkdir(parents=True, exist_ok=True)
    base = provider.base_url + ("/v1" if api == "openai" else "")
    keys = {"OPENAI_API_KEY": "sk-bench", "ANTHROPIC_API_KEY": "sk-ant-bench"}
    if name == "acdc":
        extra = {"ACDC_MODEL": MODELS[api], "ACDC_API_BASE": base, **keys}
        worker = start_worker(server_environ(repo, folder / "data", extra), folder / "log")
        measure = _acdc(worker)
    else:
        mode = name.split()[0]
        extra = {"RELAY_MODE": mode, "RELAY_MODEL": MODELS[api], "RELAY_API_BASE": base, **keys}
        worker = start_relay(folder / "log", extra)
        measure = _relay(worker)
    try:
        return asyncio.run(measure)
    finally:
        worker.stop()


async def _acdc(worker: Worker) -> Run:
    async with http_client() as http:
        session_id = await new_session(http, worker.url)
        socket = await ChatSocket.open(http, worker.url, session_id)
        await socket.turn(WARM, 120.0)
        await idle_cpu(worker)
        before, written = worker.cpu_seconds(), written_bytes(worker)
        outcome = await socket.turn("Show me the whole change.", 900.0)
        cpu = await idle_cpu(worker) - before
        written = written_bytes(worker) - written
        await socket.close()
    return Run(cpu, outcome.wire_bytes, outcome.seconds, outcome.status, written)


def written_bytes(worker: Worker) -> int:
    for line in Path(f"/proc/{worker.process.pid}/io").read_text().splitlines():
        if line.startswith("write_bytes:"):
            return int(line.split()[1])
    return 0


async def _relay(worker: Worker) -> Run:
    async with aiohttp.ClientSession() as http:
        address = worker.url.replace("http://", "ws://") + "ws/relay/"
        async with http.ws_connect(address, max_msg_size=0) as ws:
            await relayed(ws, WARM)
            await idle_cpu(worker)
            before, started = worker.cpu_seconds(), time.monotonic()
            wire = await relayed(ws, "Show me the whole change.")
            seconds = time.monotonic() - started
            cpu = await idle_cpu(worker) - before
    return Run(cpu, wire, seconds, "done")


async def relayed(ws: aiohttp.ClientWebSocketResponse, text: str) -> int:
    await ws.send_str(text)
    wire = 0
    async for message in ws:
        wire += len(message.data.encode())
        if message.data == "[done]":
            break
    return wire


async def idle_cpu(worker: Worker, limit: float = 60.0) -> float:
    """The server's CPU seconds once it has used none for IDLE seconds."""
    last, since, deadline = worker.cpu_seconds(), time.monotonic(), time.monotonic() + limit
    while time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        now = worker.cpu_seconds()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= IDLE:
            break
    return last


def start_relay(log: Path, extra: dict[str, str]) -> Worker:
    port = free_port()
    environ = {**os.environ, "NO_PROXY": "127.0.0.1,localhost", **extra}
    command = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port)]
    with log.open("a") as out:
        process = subprocess.Popen(
            [*command, "bench.stream.relay:application"],
            env=environ,
            cwd=CHECKOUT,
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=interruptible,
        )
    worker = Worker(process, port, log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the relay exited early:\n{log.read_text()[-2000:]}")
        if "Listening on TCP address" in log.read_text():
            return worker
        time.sleep(0.1)
    worker.stop()
    raise RuntimeError(f"the relay did not start:\n{log.read_text()[-2000:]}")


def _disk(runs: list[Run], reply: int) -> str:
    written = [r.disk for r in runs if r.disk is not None]
    if not written:
        return "–"
    return f"{statistics.median(written) / reply:.1f}x"


def _rows(api: str, answer: str, runs: dict[str, list[Run]]) -> list[dict[str, Any]]:
    penalty = pace_penalty()
    reference = statistics.median(r.cpu for r in runs["litellm relay"])
    reply = len(answer.encode())
    rendered = len(render_markdown(answer).encode())
    events = -(-len(answer) // CHUNK)
    rows = []
    for name in SERVERS:
        cpus = [r.cpu for r in runs[name]]
        median = statistics.median(cpus)
        wire = statistics.median(r.wire for r in runs[name])
        rows.append(
            {
                "format": api,
                "reply": f"{reply / 1024:.1f} KB",
                "server": name,
                "CPU (median)": f"{median:.2f} s",
                "rounds": " / ".join(f"{c:.2f}" for c in cpus),
                "per event": f"{median / events * 1e3:.2f} ms",
                "÷ litellm relay": f"{median / reference:.2f}x",
                "wire ÷ rendered": f"{wire / 1024:,.0f} / {rendered / 1024:,.0f} KB = "
                f"{wire / rendered:.1f}x",
                "disk ÷ reply": _disk(runs[name], reply),
                "streamed": f"{statistics.median(r.seconds for r in runs[name]):.0f} s",
                "status": ", ".join(sorted({r.status for r in runs[name]})),
                "pace penalty": penalty,
                "load": f"{os.getloadavg()[0]:.2f}",
            }
        )
    return rows
