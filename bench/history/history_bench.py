"""`acdc bench history`: search, listing, loading and restore on a large session store.

A synthetic store (1,000,000 messages in 10,000 sessions by default) is built once
(`bench.history.store`, through the ORM) and kept in ~/.cache/acdc/ with its own
repository folder and SQLite database, then only measured on later runs. This module
holds the goals and the report (the sizes are `bench.history.spec`'s), and imports no
Django model. Never a timed test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from bench.django_env import setup_django
from bench.history.spec import QUICK, HistorySpec, store_folder
from bench.report import machine, machine_line

GOALS = {
    "search, common word": 50,
    "search, rare word": 50,
    "search, phrase": 50,
    "search, part of a common word": 50,
    "search, part of a rare word": 50,
    "list sessions (50)": 20,
    "load a 1,000-message session": 50,
    "start-up restore": 1000,
}


def history_markdown(samples: dict[str, list[float]], spec: HistorySpec) -> str:
    lines = [
        f"Store: {spec.messages:,} messages in {spec.sessions:,} sessions (SQLite, FTS5 words"
        " and trigrams).",
        "",
        "| measurement | runs | p50 (ms) | p95 (ms) | goal (p50) | |",
        "| --- | ---: | ---: | ---: | --- | --- |",
    ]
    for name, values in samples.items():
        p50 = statistics.median(values)
        p95 = sorted(values)[max(0, int(round(0.95 * len(values))) - 1)]
        goal = GOALS[name]
        verdict = "met" if p50 < goal else "NOT met"
        row = f"| {name} | {len(values)} | {p50:.1f} | {p95:.1f} | < {goal:,} ms | {verdict} |"
        lines.append(row)
    return "\n".join(lines)


def print_progress(total: int) -> Callable[[int], None]:
    def show(done: int) -> None:
        percent = 100 * done // total
        print(
            f"\rbuilding the store [{'#' * (percent // 4):<25}] {percent:3d}%",
            end="",
            file=sys.stderr,
            flush=True,
        )
        if done >= total:
            print(file=sys.stderr)

    return show


def run(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """Built once into ~/.cache/acdc/ (minutes for the full size), then only measured."""
    sizes = (("messages", args.messages), ("sessions", args.sessions))
    spec = replace(QUICK if args.quick else HistorySpec(), **{k: v for k, v in sizes if v})
    folder = store_folder(spec)
    repo, ready = folder / "repo", folder / "built"
    repo.mkdir(parents=True, exist_ok=True)
    setup_django(repo, folder / "data")
    # Lazy: the store imports the models, which load only once Django is set up on `folder`.
    from bench.history import store

    repository = str(repo.resolve())
    if not ready.exists():
        store.build_store(spec, repository, print_progress(spec.messages))
        ready.write_text("ok\n")
    samples = store.measure(spec, repository)
    lines = [
        "## acdc bench history",
        "",
        machine_line(machine()) + ".",
        "",
        history_markdown(samples, spec),
    ]
    return "\n".join(lines), {"spec": vars(spec), "samples_ms": samples}
