"""`acdc bench chat`: how long `acdc chat` takes for one reply, end to end, as a user runs it.

Each run is `python -m acdc chat --model acdc/dry-run "..."` in a new process, timed from
start to exit, against one synthetic repository: first with no server (the chat runs in its
own process: Django, migrations check, litellm), then with `acdc serve` running for the
repository (the chat is the server's turn; the command imports neither). One untimed run
before each series warms the database and the server. The report names the machine and its
load at the start and the end; the goal is a reply through the server in at most 1.5 s.
Figures, never assertions.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import CHECKOUT
from bench.live_server import make_repo, server_environ, start_worker
from bench.report import QUICK_NOTE, machine, machine_line, markdown_table, percentile

GOAL_SECONDS = 1.5
RUNS, QUICK_RUNS = 9, 2
MODES = (
    ("in-process", "no server: the chat runs in its own process"),
    ("server", "`acdc serve` runs for the repository: the chat is its turn"),
)


def run(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    runs = QUICK_RUNS if args.quick else (args.runs or RUNS)
    info = machine()
    with tempfile.TemporaryDirectory(prefix="acdc-bench-chat-") as folder:
        place = Path(folder)
        environ = server_environ(make_repo(place / "repo", files=20), place / "data", {})
        environ["ACDC_MODEL"] = "acdc/dry-run"
        seconds = {"in-process": _series(environ, runs)}
        worker = start_worker(environ, place / "serve.log")
        try:
            seconds["server"] = _series(environ, runs)
        finally:
            worker.stop()
        served = "through the server" in (place / "last-stderr.txt").read_text()
    data = {"machine": info, "quick": args.quick, "runs": runs, "seconds": seconds}
    data["through_server"] = served
    return chat_markdown(data), data


def _series(environ: dict[str, str], runs: int) -> list[float]:
    _chat(environ)  # untimed: the first run migrates, the server's first turn warms it
    return [_chat(environ) for _ in range(runs)]


def _chat(environ: dict[str, str]) -> float:
    command = [sys.executable, "-m", "acdc", "chat", "--model", "acdc/dry-run", "hello"]
    started = time.perf_counter()
    done = subprocess.run(command, env=environ, cwd=CHECKOUT, capture_output=True, text=True)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"acdc chat failed ({done.returncode}): {done.stderr[-2000:]}")
    (Path(environ["ACDC_DATA_DIR"]).parent / "last-stderr.txt").write_text(done.stderr)
    return took


def chat_markdown(data: dict[str, Any]) -> str:
    rows = []
    for mode, what in MODES:
        samples = data["seconds"].get(mode, [])
        if samples:
            cells = [percentile(samples, p) for p in (50, 90)] + [min(samples), max(samples)]
            rows.append([mode, what, str(len(samples)), *(f"{s:.2f} s" for s in cells)])
    header = ["mode", "what runs", "runs", "median", "p90", "min", "max"]
    lines = [
        "## `acdc chat`, one `acdc/dry-run` reply, end to end",
        "",
        machine_line(data["machine"]) + ".",
        "",
        markdown_table(header, rows, "llrrrrr"),
    ]
    server = data["seconds"].get("server")
    if server:
        median = percentile(server, 50)
        verdict = "met" if median <= GOAL_SECONDS else "NOT met"
        lines += [
            "",
            f"Through the server: median {median:.2f} s (goal ≤ {GOAL_SECONDS} s: {verdict}).",
        ]
    if not data.get("through_server", True):
        lines += ["", "**The server series did not go through the server** (see stderr)."]
    if data.get("quick"):
        lines += ["", QUICK_NOTE]
    return "\n".join(lines)
