"""`acdc bench`: the prompt-cache and context-assembly benchmarks (code in `tests/bench/`).

`cache` replays scripted sessions through the real turn pipeline with `acdc/fake` (or,
with `--direct`, through `ContextManager` alone) and prices every request with the
provider-cache simulator; `assembly` times one turn's context work on a synthetic
repository. Each prints a markdown table and writes `<out>/<name>.md` and `.json`. The
pipeline replay runs Django on a throwaway repository and SQLite database in a temporary
folder, whatever ACDC_REPO or DATABASE_URL say. Never a timed test.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

QUICK_TURNS = 6
QUICK_NOTE = "Quick run: sizes cut down to check the plumbing; the figures mean nothing."


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
    parser = argparse.ArgumentParser(prog="acdc bench", description=__doc__.splitlines()[0])
    names = parser.add_subparsers(dest="name", required=True)
    history = names.add_parser("history", parents=[common], help="run the history benchmark")
    history.add_argument("--messages", type=int, help="messages in the synthetic store")
    history.add_argument("--sessions", type=int, help="sessions in the synthetic store")
    repo = names.add_parser("repo", parents=[common], help="run the repository benchmark")
    repo.add_argument("--files", type=int, help="files in the synthetic repository")
    for name in ("cache", "assembly", "all"):
        sub = names.add_parser(name, parents=[common], help=f"run the {name} benchmark")
        if name in ("cache", "all"):
            sub.add_argument("--turns", type=int, default=40, help="turns per scripted session")
            sub.add_argument(
                "--direct",
                action="store_true",
                help="replay through ContextManager only, without the pipeline",
            )
        if name in ("assembly", "all"):
            sub.add_argument("--files", type=int, help="files in the synthetic repository")
            sub.add_argument("--selected", type=int, help="files selected into the context")
            sub.add_argument("--history", type=int, help="history messages")
            sub.add_argument("--runs", type=int, help="warm iterations (cold: a tenth)")
            sub.add_argument("--scheme", default="acdc", help="tier scheme (default acdc)")
    return parser


def main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    if not _checkout_importable():
        print(
            "acdc bench: error: the benchmarks need a source checkout (tests/bench)",
            file=sys.stderr,
        )
        return 2
    from acdc.offline import configure_offline_environment

    configure_offline_environment()
    # Assembly first: its max RSS should not include Django and litellm.
    if args.name in ("assembly", "all"):
        _report("assembly", args.out, bench_assembly(args))
    if args.name in ("cache", "all"):
        _report("cache", args.out, bench_cache(args))
    if args.name == "history":
        _report("history", args.out, bench_history(args))
    if args.name == "repo":
        _report("repo", args.out, bench_repo(args))
    return 0


def bench_history(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """Built once into ~/.cache/acdc/ (minutes for the full size), then only measured."""
    from dataclasses import replace

    from tests.bench import history_bench as hb
    from tests.bench.report import machine, machine_line

    spec = hb.QUICK if args.quick else hb.HistorySpec()
    spec = replace(
        spec, **{k: v for k, v in (("messages", args.messages), ("sessions", args.sessions)) if v}
    )
    folder = hb.store_folder(spec)
    repo, data = folder / "repo", folder / "data"
    ready = folder / "built"
    repo.mkdir(parents=True, exist_ok=True)
    setup_django(repo, data)
    repository = str(repo.resolve())
    if not ready.exists():
        hb.build_store(spec, repository, hb.print_progress(spec.messages))
        ready.write_text("ok\n")
    samples = hb.measure(spec, repository)
    lines = [
        "## acdc bench history",
        "",
        machine_line(machine()) + ".",
        "",
        hb.history_markdown(samples, spec),
    ]
    return "\n".join(lines), {"spec": vars(spec), "samples_ms": samples}


def _checkout_importable() -> bool:
    """`tests.bench` is no installed package: put the checkout on sys.path, which a console
    script's does not start with."""
    root = Path(__file__).resolve().parent.parent
    if not (root / "tests" / "bench" / "__init__.py").is_file():
        return False
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    return True


def _report(name: str, out: Path, result: tuple[str, dict[str, Any]]) -> None:
    from tests.bench.report import write_results

    markdown, data = result
    print(markdown, end="\n\n", flush=True)
    paths = write_results(out, name, markdown, data)
    print("wrote " + ", ".join(str(p) for p in paths), file=sys.stderr)


def bench_repo(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """The Files panel on a synthetic repository: listing, payload, token counting."""
    from dataclasses import replace

    from tests.bench import repo_bench as rb
    from tests.bench.report import machine, machine_line

    spec = rb.QUICK if args.quick else rb.RepoSpec()
    if args.files:
        spec = replace(spec, files=args.files, folders=max(1, args.files // 100))
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="acdc-bench-") as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        print(f"acdc bench repo: writing {spec.files:,} files…", file=sys.stderr, flush=True)
        size = rb.build_repo(repo, spec)
        setup_django(repo, Path(tmp) / "data")
        result = rb.measure(repo, size)
        _close_database()
    info = machine()
    lines = [
        "## acdc bench repo",
        "",
        machine_line(info) + f"; took {time.perf_counter() - started:.1f} s.",
        "",
        rb.repo_markdown(result),
        *(["", QUICK_NOTE] if args.quick else []),
    ]
    return "\n".join(lines), {"machine": info, **result}


def bench_cache(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    from tests.bench.cache_bench import run_sessions
    from tests.bench.report import machine, machine_line
    from tests.bench.sessions import TURN_SECONDS, file_edit_session, selection_session

    turns = QUICK_TURNS if args.quick else args.turns
    sessions = [file_edit_session(turns), selection_session(turns)]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="acdc-bench-") as tmp:
        if args.direct:
            how, notes = _direct_replay(), []
            tables, data = run_sessions(how, sessions)
            path = "FALLBACK: replayed through `ContextManager` directly, not the turn pipeline."
        else:
            how, notes = _pipeline_replay(Path(tmp))
            tables, data = run_sessions(how, sessions)
            path = (
                "Replayed through the real turn pipeline (`chat.turn.turns.run_turn`, `acdc/fake`)."
            )
            if not args.quick:
                long_table, long_data = _long_session(Path(tmp), args.out)
                tables += "\n\n" + long_table
                data.append(long_data)
            _close_database()
    info = machine()
    lines = [
        "## acdc bench cache",
        "",
        path,
        "Cost in input-token units: uncached 1x, cache writes 1.25x, reads 0.1x; "
        f"5-minute cache lifetime on a fake clock, {TURN_SECONDS:.0f} s per turn.",
        machine_line(info) + f"; took {time.perf_counter() - started:.1f} s.",
        "",
        tables,
        *(["", *notes] if notes else []),
        *(["", QUICK_NOTE] if args.quick else []),
    ]
    mode = "direct" if args.direct else "pipeline"
    return "\n".join(lines), {"machine": info, "mode": mode, "sessions": data, "notes": notes}


def _long_session(tmp: Path, out: Path) -> tuple[str, dict[str, Any]]:
    """The 120-turn session that crosses the compaction trigger, and its plot (SVG)."""
    from tests.bench.compaction_bench import run_long

    def repo_for(strategy: str) -> Path:
        return tmp / "repo"

    table, data, svg = run_long(repo_for)
    out.mkdir(parents=True, exist_ok=True)
    plot = out / "cache-long-session.svg"
    plot.write_text(svg, encoding="utf-8")
    table += f"\n\nPrompt tokens per turn: `{plot}`."
    return table, {"session": "long session with compaction", "strategies": data}


def _direct_replay() -> Any:
    from contextcore.tokens import TokenCounter
    from tests.bench.cache_bench import replay_direct

    counter = TokenCounter("cl100k_base")
    return lambda session, strategy: replay_direct(session, strategy, counter=counter)


def _pipeline_replay(tmp: Path) -> tuple[Any, list[str]]:
    repo = tmp / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=False, capture_output=True)
    setup_django(repo, tmp / "data")
    from tests.bench.turn_replay import LIMITATIONS, replay_through_turns

    def replay(session: Any, strategy: str) -> Any:
        return replay_through_turns(session, strategy, repo)

    return replay, [LIMITATIONS]


def setup_django(repo: Path, data_dir: Path) -> None:
    """Django on `repo` with a fresh SQLite database, unless this process already has it
    (under pytest the test settings stay and the replay overrides ACDC_REPO)."""
    from django.conf import settings

    if not settings.configured:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "acdc.settings")
        os.environ["ACDC_REPO"], os.environ["ACDC_DATA_DIR"] = str(repo), str(data_dir)
        for name in ("DATABASE_URL", "REDIS_URL", "ACDC_RECORD_REQUESTS", "ACDC_TIER_SCHEME"):
            os.environ.pop(name, None)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)


def _close_database() -> None:
    from django.db import connections

    connections.close_all()


def bench_assembly(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    from tests.bench.assembly_bench import QUICK, AssemblySpec, assembly_markdown, run, with_sizes  # noqa: E501
    from tests.bench.report import machine, machine_line

    runs = args.runs
    spec = with_sizes(
        QUICK if args.quick else AssemblySpec(),
        scheme=args.scheme,
        files=args.files,
        selected=args.selected,
        history=args.history,
        warm_runs=runs,
        cold_runs=max(1, runs // 10) if runs else None,
    )
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="acdc-bench-") as tmp:
        results = run(Path(tmp), spec)
    info = machine()
    lines = [
        "## acdc bench assembly",
        "",
        machine_line(info) + f"; took {time.perf_counter() - started:.1f} s.",
        "",
        assembly_markdown(results),
        *(["", QUICK_NOTE] if args.quick else []),
    ]
    return "\n".join(lines), {"machine": info, **results}
