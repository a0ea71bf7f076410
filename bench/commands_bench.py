"""The commands benchmark: what the sandbox costs a run, and what 5 MB of output costs acdc.

A command that does nothing (`true`) is started N times each way: by `subprocess.run`
(the floor), by acdc's runner without a sandbox, and by acdc's runner inside bubblewrap
(the confinement worked out from the disk before each run, as a real run does: every
`.git`, protected file and secret-shaped file of the work tree found). The median and the
90th percentile of each, the sandbox's extra cost over the plain runner, and the walk of
the work tree alone are shown. Then a sandboxed command prints 5 MB and the CPU time this
process spent reading it (user + system, from getrusage) is set beside the wall time.
The repository is a throwaway one of a few hundred files unless `--repo` names another
(it is only read; `true` writes nothing). Figures, never assertions.
"""

from __future__ import annotations

import argparse
import asyncio
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
    medians = {name: percentile(samples, 50) for name, samples in times.items()}
    data_out = {
        "machine": info,
        "runs": runs,
        "repository": str(args.repo or f"throwaway, {FILES} files"),
        "ms": times,
        "median_ms": medians,
        "extra_ms": medians["sandboxed"] - medians["plain"],
        "output": output,
    }
    return _markdown(data_out, info, args.quick), data_out


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
        machine_line(info),
    ]
    if quick:
        lines += ["", QUICK_NOTE]
    return "\n".join(lines)
