"""The commands benchmark: what the sandbox costs a run, and what 5 MB of output costs acdc.

A command that does nothing (`true`) is started N times each way: by `subprocess.run`
(the floor), by acdc's runner without a sandbox, and by acdc's runner inside bubblewrap
(the confinement worked out from the disk before each run, as a real run does: every
`.git`, protected file and secret-shaped file of the work tree found). The median and the
90th percentile of each, the sandbox's extra cost over the plain runner, and the walk of
the work tree alone are shown. Then a sandboxed command prints 5 MB and the CPU time this
process spent reading it (user + system, from getrusage) is set beside the wall time. Then
the same in a real `acdc serve` with a websocket attached, as a page is: the offline model
calls `run_command` for a declared command printing 5 MB, and the server's CPU for that turn
(/proc, the server alone, not the command) is set beside the same turn whose command prints
one line, and beside `subprocess.run` reading the 5 MB in this process (the floor).
The repository is a throwaway one of a few hundred files unless `--repo` names another
(it is only read; `true` writes nothing). Figures, never assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.django_env import setup_django
from bench.report import QUICK_NOTE, machine, machine_line, markdown_table, percentile

GOAL_EXTRA_MS = 50.0
RUNS = 21
FILES = 400
OUTPUT_BYTES = 5 * 1024 * 1024


def _throwaway_repo(folder: Path) -> Path:
    root = folder / "repo"
    for index in range(FILES):
        path = root / f"pkg{index % 20}" / f"module_{index}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE = {index}\n")
    (root / ".env").write_text("TOKEN=not-a-real-one\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _timed(samples: list[float], started: float) -> None:
    samples.append((time.perf_counter() - started) * 1000)


async def _measure(root: Path, data: Path, runs: int) -> dict[str, list[float]]:
    from chat.repo.commands.runner import run_argv
    from chat.repo.commands.sandbox import Sandbox, confinement

    sandbox = Sandbox.probe()
    if not sandbox.available:
        raise SystemExit(f"acdc bench commands: no sandbox here: {sandbox.reason}")
    times: dict[str, list[float]] = {"subprocess": [], "plain": [], "sandboxed": [], "walk": []}
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(["true"], check=True)
        _timed(times["subprocess"], started)
        started = time.perf_counter()
        await run_argv(["true"], root=root, timeout=60, data_dir=data)
        _timed(times["plain"], started)
        started = time.perf_counter()
        await run_argv(["true"], root=root, timeout=60, sandbox=sandbox, data_dir=data)
        _timed(times["sandboxed"], started)
        started = time.perf_counter()
        confinement(root, data)
        _timed(times["walk"], started)
    return times


async def _big_output(root: Path, data: Path) -> dict[str, float]:
    from chat.repo.commands.output import for_model
    from chat.repo.commands.runner import run_argv
    from chat.repo.commands.sandbox import Sandbox

    code = f"import sys; sys.stdout.write(('x' * 99 + '\\n') * {OUTPUT_BYTES // 100})"
    before, started = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    # The interpreter itself: a virtualenv under /tmp is hidden by the sandbox's own /tmp.
    python = os.path.realpath(sys.executable)
    outcome = await run_argv(
        [python, "-c", code], root=root, timeout=120, sandbox=Sandbox.probe(), data_dir=data
    )
    shown = for_model(outcome.captured, 8192)
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_SELF)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {
        "bytes": outcome.captured.total,
        "wall_s": wall,
        "cpu_s": cpu,
        "model_bytes": len(shown.encode()),
    }


PRINT_5MB = f"yes 'a line a test run prints, again and again' | head -c {OUTPUT_BYTES}"
SERVED_ROUNDS = 3


async def _served_turns(root: Path, folder: Path, rounds: int) -> dict[str, list[float]]:
    """Server CPU of one turn whose command prints 5 MB, and of one whose command prints a
    line, in alternating rounds on one `acdc serve`."""
    from bench.live_server import http_client, server_environ, start_worker

    script, data = folder / "fake-script.json", folder / "served-data"
    environ = server_environ(root, data, {"ACDC_FAKE_SCRIPT": str(script)})
    for name, shell in (("loud", PRINT_5MB), ("quiet", "echo one line")):
        subprocess.run(
            [sys.executable, "-m", "acdc", "commands", "add", name, "--", "sh", "-c", shell],
            env=environ,
            check=True,
            capture_output=True,
        )
    worker = start_worker(environ, folder / "served.log")
    cpu: dict[str, list[float]] = {"loud": [], "quiet": []}
    try:
        async with http_client() as http:
            # The first turn of a server imports litellm (seconds of CPU): not measured.
            for index, name in enumerate(["quiet"] + ["loud", "quiet"] * rounds):
                spent = await _one_turn(http, worker, script, name)
                if index:
                    cpu[name].append(spent)
    finally:
        worker.stop()
    return cpu


async def _one_turn(http, worker, script: Path, name: str) -> float:
    """The server's CPU for one turn whose model runs the declared command `name`."""
    from bench.live_server import ChatSocket, new_session

    steps = [
        {"tool_calls": [{"name": "run_command", "arguments": {"name": name}}]},
        {"text": "It ran."},
    ]
    script.write_text(json.dumps(steps))
    session = await new_session(http, worker.url)
    socket = await ChatSocket.open(http, worker.url, session)
    before = worker.cpu_seconds()
    outcome = await socket.turn(f"Run {name}", timeout=300)
    spent = worker.cpu_seconds() - before
    await socket.close()
    if outcome.status != "complete":
        raise SystemExit(f"the {name} turn ended {outcome.status}: {outcome.detail}")
    return spent


def _plain_read_cpu() -> float:
    before = resource.getrusage(resource.RUSAGE_SELF)
    subprocess.run(["sh", "-c", PRINT_5MB], capture_output=True, check=True)
    after = resource.getrusage(resource.RUSAGE_SELF)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def run(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    runs = 5 if args.quick else (args.runs or RUNS)
    info = machine()
    with tempfile.TemporaryDirectory(prefix="acdc-bench-commands-") as scratch:
        folder = Path(scratch)
        root = Path(args.repo).resolve() if args.repo else _throwaway_repo(folder)
        data = folder / "data"
        data.mkdir()
        setup_django(root, data)
        times = asyncio.run(_measure(root, data, runs))
        output = asyncio.run(_big_output(root, data))
        served_root = root if args.repo else _throwaway_repo(folder / "served")
        served = asyncio.run(_served_turns(served_root, folder, 1 if args.quick else SERVED_ROUNDS))
        plain_read = min(_plain_read_cpu() for _ in range(3))
    medians = {name: percentile(samples, 50) for name, samples in times.items()}
    data_out = {
        "machine": info,
        "runs": runs,
        "repository": str(args.repo or f"throwaway, {FILES} files"),
        "ms": times,
        "median_ms": medians,
        "extra_ms": medians["sandboxed"] - medians["plain"],
        "output": output,
        "served_cpu_s": served,
        "plain_read_cpu_s": plain_read,
    }
    return _markdown(data_out, info, args.quick), data_out


def _served_table(data: dict[str, Any]) -> str:
    served, floor = data["served_cpu_s"], data["plain_read_cpu_s"]
    loud, quiet = percentile(served["loud"], 50), percentile(served["quiet"], 50)
    rows = [
        ["a turn whose command prints 5 MB (server CPU)", f"{loud:.2f}"],
        ["the same turn, the command prints one line", f"{quiet:.2f}"],
        ["what the 5 MB cost the server", f"{loud - quiet:.2f}"],
        ["`subprocess.run(capture_output=True)` reading the 5 MB (the floor)", f"{floor:.2f}"],
    ]
    rounds = len(served["loud"])
    table = markdown_table(["run", "CPU s (median)"], rows, "lr")
    return f"{rounds} round(s), alternating; CPU of the server process alone.\n\n{table}"


def _markdown(data: dict[str, Any], info: dict[str, Any], quick: bool) -> str:
    rows = []
    labels = {
        "subprocess": "subprocess.run(['true'])",
        "plain": "acdc's runner, no sandbox",
        "sandboxed": "acdc's runner in bubblewrap",
        "walk": "the work tree's walk alone",
    }
    for name, label in labels.items():
        samples = data["ms"][name]
        rows.append([label, f"{percentile(samples, 50):.1f}", f"{percentile(samples, 90):.1f}"])
    extra = data["extra_ms"]
    met = "met" if extra <= GOAL_EXTRA_MS else "not met"
    out = data["output"]
    lines = [
        "## Commands: the sandbox's start-up cost per run",
        "",
        f"{data['runs']} runs of `true` each way, on {data['repository']}.",
        "",
        markdown_table(["run", "median ms", "p90 ms"], rows, "lrr"),
        "",
        f"The sandbox adds {extra:.1f} ms per run (median; goal ≤ {GOAL_EXTRA_MS:.0f} ms: {met}).",
        "",
        f"5 MB of output ({out['bytes']:,} bytes) read in {out['wall_s']:.2f} s of wall time "
        f"and {out['cpu_s']:.2f} s of acdc's CPU; the model was shown {out['model_bytes']:,} "
        "bytes.",
        "",
        "### In `acdc serve`, a websocket attached",
        "",
        _served_table(data),
        "",
        machine_line(info),
    ]
    if quick:
        lines += ["", QUICK_NOTE]
    return "\n".join(lines)
