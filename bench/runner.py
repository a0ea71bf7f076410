"""The `acdc bench` runner: the command line, the benchmarks by name, the result files.

`acdc.bench` hands over here. A benchmark's module is imported only when that benchmark
is chosen, so a run loads only what it measures: the assembly benchmark's max RSS must
not include Django and litellm, which is also why `all` runs it before the cache
benchmark. Each module's `run(args)` returns the markdown and the data; both are printed
or written here as `<out>/<name>.md` and `<out>/<name>.json`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.report import write_results
from chat.llm.environment import configure_offline_environment

DESCRIPTION = (
    "`acdc bench`: the prompt-cache and context-assembly benchmarks (the `bench` package)."
)
BENCHMARKS = {
    "assembly": "bench.assembly.assembly_bench",
    "cache": "bench.cache.cache_bench",
    "chat": "bench.chat.chat_bench",
    "commands": "bench.commands.commands_bench",
    "edits": "bench.edits.edits_bench",
    "history": "bench.history.history_bench",
    "map": "bench.repo.map_bench",
    "repo": "bench.repo.repo_bench",
    "startup": "bench.startup.startup_bench",
    "turn": "bench.turn.turn_bench",
}
# `acdc bench context --part NAME`: each part's module, whose `run(args)` reports on it.
CONTEXT_PARTS = {
    "localization": "bench.context.localization",
    "trail": "bench.context.trail",
}
ALL = ("assembly", "cache")  # assembly first: its max RSS is taken before Django loads


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--out",
        type=Path,
        default=Path("bench-results"),
        help="folder for the .md and .json results (default bench-results/)",
    )
    common.add_argument(
        "--quick",
        action="store_true",
        help="a small, fast run to check the plumbing (figures not meaningful)",
    )
    parser = argparse.ArgumentParser(prog="acdc bench", description=DESCRIPTION)
    names = parser.add_subparsers(dest="name", required=True)
    history = names.add_parser("history", parents=[common], help="run the history benchmark")
    history.add_argument("--messages", type=int, help="messages in the synthetic store")
    history.add_argument("--sessions", type=int, help="sessions in the synthetic store")
    repomap = names.add_parser("map", parents=[common], help="run the repository-map benchmark")
    repomap.add_argument("--source", type=Path, help="folder of code to copy (default: Django's)")
    startup = names.add_parser("startup", parents=[common], help="run the start-up benchmark")
    startup.add_argument("--source", type=Path, help="folder of code to copy (default: Django's)")
    startup.add_argument(
        "--files", type=int, help="serve a synthetic repository of this many files instead"
    )
    repo = names.add_parser("repo", parents=[common], help="run the repository benchmark")
    repo.add_argument("--files", type=int, help="files in the synthetic repository")
    _add_turn_options(names.add_parser("turn", parents=[common], help="run the turn benchmark"))
    edits = names.add_parser("edits", parents=[common], help="run the edit-matching benchmark")
    edits.add_argument(
        "--aider",
        metavar="PYTHON",
        help="the Python of a venv with aider-chat, whose matcher runs beside acdc's "
        "(default /work/aider-venv/bin/python when it exists)",
    )
    commands = names.add_parser(
        "commands", parents=[common], help="the command sandbox's cost per run"
    )
    commands.add_argument("--runs", type=int, help="runs of each kind (default 21)")
    commands.add_argument("--repo", type=Path, help="repository to run in (default: a new one)")
    context = names.add_parser("context", parents=[common], help="what the model is sent")
    context.add_argument(
        "--part", action="append", choices=tuple(CONTEXT_PARTS), help="repeatable; default all"
    )
    _add_localization_options(context)
    chat = names.add_parser("chat", parents=[common], help="time `acdc chat`, server or not")
    chat.add_argument("--runs", type=int, help="timed runs per mode (default 9)")
    for name in ("cache", "assembly", "all"):
        sub = names.add_parser(name, parents=[common], help=f"run the {name} benchmark")
        if name in ("cache", "all"):
            _add_cache_options(sub)
        if name in ("assembly", "all"):
            _add_assembly_options(sub)
    return parser


def _add_localization_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--aider",
        metavar="PYTHON",
        help="localization: the Python of a venv with aider-chat, whose map runs beside "
        "acdc's request (default /work/aider-venv/bin/python when it exists)",
    )
    parser.add_argument(
        "--mirrors",
        type=Path,
        help="localization: folder of the repositories' git mirrors, as owner+name/repo "
        "(default ACDC_BENCH_MIRRORS, else /work/.mirror)",
    )
    parser.add_argument(
        "--regenerate", action="store_true", help="localization: rebuild the set from the mirrors"
    )
    parser.add_argument(
        "--set",
        dest="fix_set",
        type=Path,
        help="localization: the frozen set to read (default bench/context/fixes.json)",
    )
    parser.add_argument("--cases", type=int, help="localization: at most this many per repository")
    parser.add_argument(
        "--repo", action="append", help="localization: only this owner/name (repeatable)"
    )


def _add_cache_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--turns", type=int, default=40, help="turns per scripted session")
    parser.add_argument(
        "--direct",
        action="store_true",
        help="replay through ContextManager only, without the pipeline",
    )
    parser.add_argument(
        "--no-wire",
        dest="wire",
        action="store_false",
        help="skip the over-the-wire runs (acdc serve against loopback provider fakes; "
        "--direct skips them too)",
    )
    parser.add_argument(
        "--wire-turns", type=int, help="over the wire: play only the first N turns of each shape"
    )
    parser.add_argument(
        "--mcp",
        choices=("all", "deferred"),
        help="in process: with mcp-server-time declared, its definitions in `tools` (all) "
        "or only search_tools and call_tool there (deferred)",
    )


def _add_assembly_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--files", type=int, help="files in the synthetic repository")
    parser.add_argument("--selected", type=int, help="files selected into the context")
    parser.add_argument("--history", type=int, help="history messages")
    parser.add_argument("--runs", type=int, help="warm iterations (cold: a tenth)")
    parser.add_argument("--scheme", default="acdc", help="tier scheme (default acdc)")


def _add_turn_options(parser: argparse.ArgumentParser) -> None:
    parts = ("cpu", "storage", "stream", "kill", "load", "oneline", "scale")
    parser.add_argument("--part", action="append", choices=parts, help="repeatable; default all")
    parser.add_argument("--trials", type=int, help="kill -9 trials (default 12)")
    parser.add_argument("--sessions", type=int, help="load: sessions (default 100)")
    parser.add_argument("--turns-per-session", type=int, help="load: turns each (default 20)")
    parser.add_argument(
        "--setup",
        action="append",
        choices=("sqlite", "pg1", "pg2"),
        help="load, scale: SQLite, or PostgreSQL + Redis with 1 or 2 workers "
        "(default sqlite, pg2; scale: all three)",
    )
    parser.add_argument("--scale-sessions", type=int, help="scale: sessions (default 16)")
    parser.add_argument("--scale-turns", type=int, help="scale: turns each (default 8)")
    parser.add_argument("--scale-rounds", type=int, help="scale: rounds (default 2)")
    parser.add_argument(
        "--scale-shape", action="append", choices=("paced", "cpu"), help="scale: default both"
    )
    parser.add_argument(
        "--stream-size", action="append", type=float, help="stream: reply KB (default 15, 60)"
    )
    parser.add_argument(
        "--stream-format",
        action="append",
        choices=("openai", "anthropic"),
        help="stream: the provider's format (default both)",
    )
    parser.add_argument("--stream-rounds", type=int, help="stream: rounds (default 3)")
    parser.add_argument("--oneline-turns", type=int, help="oneline: turns per server (default 20)")
    parser.add_argument("--database-url", help="PostgreSQL server (default DATABASE_URL)")
    parser.add_argument("--redis-url", help="Redis for the channel layer (default REDIS_URL)")
    parser.add_argument(
        "--server-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="load: an extra setting for the servers (repeatable)",
    )


def main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    configure_offline_environment()
    if args.name == "context":
        for part in args.part or CONTEXT_PARTS:
            module = importlib.import_module(CONTEXT_PARTS[part])
            _report(f"context-{part}", args.out, module.run(args))
        return 0
    for name in ALL if args.name == "all" else (args.name,):
        benchmark = importlib.import_module(BENCHMARKS[name])
        _report(name, args.out, benchmark.run(args))
    return 0


def _report(name: str, out: Path, result: tuple[str, dict[str, Any]]) -> None:
    markdown, data = result
    print(markdown, end="\n\n", flush=True)
    paths = write_results(out, name, markdown, data)
    print("wrote " + ", ".join(str(p) for p in paths), file=sys.stderr)
