"""`acdc bench turn`: what a chat turn costs the server, on disk, on the wire, under load.

Seven parts, each runnable alone with `--part` (repeatable; all by default):
(a) `cpu`: CPU and SQL statements per plain turn by session size and selected files
    (`turn_cost`, in this process); (b) `storage`: database bytes per message and bytes
    written per turn as a session grows, without and with compaction (`turn_storage`, a
    child process per row); (c) `stream`: stream CPU and wire bytes, from
    `bench.stream.stream_bench.stream_figures()` when that module is present; (d) `kill`:
    kill -9 the server mid-answer and compare the stored answer with what was shown
    (`turn_kill`); (e) `load`: sessions chatting at once over websockets, SQLite with one
    worker against PostgreSQL + Redis with one and two (`turn_load`); (f) `oneline`: a
    one-line reply's turn beside the bare relays, CPU and bytes written (`turn_oneline`);
    (g) `scale`: 1 vs 2 workers for paced (provider-bound) and for CPU-bound turns, SQLite
    with one worker beside them (`bench.turn.scale`).
The report names the machine and its load average at the start and the end. Everything
runs in a temporary folder, and PostgreSQL gets a database of the run's own
(`acdc_bench_turn_<pid>`). Figures, never assertions.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.django_env import close_database, setup_django
from bench.live_server import make_repo
from bench.report import QUICK_NOTE, machine, machine_line, markdown_table
from bench.turn.cost import QUICK as COST_QUICK
from bench.turn.cost import CostSpec, cost_markdown, measure_costs
from bench.turn.kill import kill_data, kill_markdown, run_trials
from bench.turn.load import LoadResult, Setup, load_markdown, run_load
from bench.turn.oneline import goal_line, oneline
from bench.turn.scale import run_scale, scale_markdown
from bench.turn.storage import QUICK as STORAGE_QUICK
from bench.turn.storage import StorageSpec, storage_markdown, storage_rows

PARTS = ("cpu", "storage", "stream", "kill", "load", "oneline", "scale")
DEFAULT_SETUPS = ("sqlite", "pg2")
SCALE_SETUPS = ("sqlite", "pg1", "pg2")
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/test"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
TITLES = {
    "cpu": "(a) Server CPU and SQL per turn",
    "storage": "(b) Database size and bytes written",
    "stream": "(c) Streaming: CPU and wire bytes",
    "kill": "(d) kill -9 mid-answer",
    "load": "(e) Many sessions at once",
    "oneline": "(f) A one-line turn beside the relays",
    "scale": "(g) One worker or two, paced and CPU-bound turns",
}


def run(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    parts = [p for p in PARTS if p in (args.part or PARTS)]
    # Read now: setting Django up for part (a) takes them out of the environment.
    args.database_url = args.database_url or os.environ.get("DATABASE_URL") or DEFAULT_DATABASE_URL
    args.redis_url = args.redis_url or os.environ.get("REDIS_URL") or DEFAULT_REDIS_URL
    info, started = machine(), time.perf_counter()
    sections, data = [], {"machine": info, "quick": args.quick}
    with tempfile.TemporaryDirectory(prefix="acdc-bench-turn-") as tmp:
        for part in parts:
            folder = Path(tmp) / part
            folder.mkdir()
            markdown, data[part] = _PARTS[part](args, folder)
            sections.append(f"### {TITLES[part]}\n\n{markdown}")
    head = f"{machine_line(info)}; took {time.perf_counter() - started:.0f} s."
    lines = ["## acdc bench turn", "", head, "", "\n\n".join(sections)]
    if args.quick:
        lines += ["", QUICK_NOTE]
    return "\n".join(lines), data


def _cpu(args: argparse.Namespace, folder: Path) -> tuple[str, Any]:
    spec = COST_QUICK if args.quick else CostSpec()
    repo = make_repo(folder / "repo", files=max(spec.files), functions=spec.file_functions)
    setup_django(repo, folder / "data")
    rows = measure_costs(repo, spec)
    close_database()
    return cost_markdown(rows, spec), rows


def _storage(args: argparse.Namespace, folder: Path) -> tuple[str, Any]:
    spec = STORAGE_QUICK if args.quick else StorageSpec()
    rows = storage_rows(folder, spec)
    return storage_markdown(rows, spec), rows


def _stream(args: argparse.Namespace, folder: Path) -> tuple[str, Any]:
    """The stream benchmark's figures (`bench.stream.stream_bench`, its own engineer's),
    then acdc beside bare relays at a provider's pace (`bench.stream.sidebyside`)."""
    if importlib.util.find_spec("bench.stream.stream_bench") is None:
        return "Not measured: bench/stream/stream_bench.py is not in this checkout.", []
    stream_figures = importlib.import_module("bench.stream.stream_bench").stream_figures
    rows = stream_figures(sizes_kb=(2,), before_up_to_kb=2) if args.quick else stream_figures()
    side_by_side = importlib.import_module("bench.stream.sidebyside").side_by_side
    sizes = tuple(args.stream_size or ((2,) if args.quick else (15, 60)))
    formats = tuple(args.stream_format or ("openai", "anthropic"))
    rounds = args.stream_rounds or (1 if args.quick else 3)
    paced = side_by_side(folder, make_repo(folder / "repo"), sizes, formats, rounds)
    head = (
        f"At a provider's pace (one loopback provider, 40-character events 0.12 s apart), "
        f"`acdc serve` beside a bare Channels relay through litellm and one through httpx, "
        f"each its own process, {rounds} round(s) in rotated order; CPU = user + system "
        "from the message until 1 s idle:"
    )
    return f"{_rows_table(rows)}\n\n{head}\n\n{_rows_table(paced)}", {
        "coalescer": rows,
        "side by side": paced,
    }


def _rows_table(rows: list[dict[str, Any]]) -> str:
    """A table of whatever keys the rows have, in their order (a skipped row says why)."""
    header = list(dict.fromkeys(key for row in rows for key in row if key != "skipped"))
    cells = [
        [f"{row[k]:,}" if isinstance(row.get(k), int) else str(row.get(k, "")) for k in header]
        + [row.get("skipped", "")]
        for row in rows
    ]
    return markdown_table([*header, "note"], cells, "l" * (len(header) + 1))


def _kill(args: argparse.Namespace, folder: Path) -> tuple[str, Any]:
    repo = make_repo(folder / "repo")
    trials = run_trials(folder, repo, args.trials or (2 if args.quick else 12))
    return kill_markdown(trials), kill_data(trials)


def _load_part(args: argparse.Namespace, folder: Path) -> tuple[str, Any]:
    sessions = args.sessions or (4 if args.quick else 100)
    turns = args.turns_per_session or (3 if args.quick else 20)
    extra = tuple(tuple(item.split("=", 1)) for item in args.server_env)
    results: list[LoadResult] = []
    for name in args.setup or DEFAULT_SETUPS:
        setup = _setup(name, args, extra)
        place = folder / name
        place.mkdir()
        repo = make_repo(place / "repo")
        result = run_load(place, repo, setup, sessions, turns)
        if result.errors:  # the servers' logs say why; the folder goes away
            _keep_logs(place, args.out / "turn-logs" / name)
        results.append(result)
    head = (
        f"{sessions} sessions × {turns} turns, all sessions at once, one websocket each; "
        "the fake model echoes the message (~100 characters)."
    )
    return head + "\n\n" + load_markdown(results), [r.as_data() for r in results]


def _keep_logs(folder: Path, into: Path) -> None:
    into.mkdir(parents=True, exist_ok=True)
    for log in folder.glob("*.log"):
        shutil.copy(log, into / log.name)


def _setup(name: str, args: argparse.Namespace, extra: tuple) -> Setup:
    if name == "sqlite":
        return Setup("SQLite, 1 worker", extra=extra)
    workers = int(name[2:])
    label = f"PostgreSQL + Redis, {workers} worker{'s' if workers > 1 else ''}"
    return Setup(label, workers, args.database_url, args.redis_url, extra)


def _oneline(args: argparse.Namespace, folder: Path) -> tuple[str, Any]:
    turns = args.oneline_turns or (3 if args.quick else 20)
    rows = oneline(folder, make_repo(folder / "repo"), turns)
    head = (
        f"{turns} turns of a one-line reply (one event, no delay) per server, the servers "
        "at once, one turn at a time in rotated order; medians per turn:"
    )
    return f"{head}\n\n{_rows_table(rows)}\n\n{goal_line(rows)}", rows


def _scale(args: argparse.Namespace, folder: Path) -> tuple[str, Any]:
    sessions = args.scale_sessions or (2 if args.quick else 16)
    turns = args.scale_turns or (1 if args.quick else 8)
    extra = tuple(tuple(item.split("=", 1)) for item in args.server_env)
    setups = [_setup(name, args, extra) for name in args.setup or SCALE_SETUPS]
    rounds = args.scale_rounds or (1 if args.quick else 2)
    rows = run_scale(folder, setups, sessions, turns, rounds, tuple(args.scale_shape or ()))
    return scale_markdown(rows, sessions, turns), rows


_PARTS = {
    "cpu": _cpu,
    "storage": _storage,
    "stream": _stream,
    "kill": _kill,
    "load": _load_part,
    "oneline": _oneline,
    "scale": _scale,
}
