"""The repository-map benchmark: cold build and incremental update on real code.

Django's own source, from the installed package (any folder with `--source`), is copied
into a throwaway git repository. Timed: the cold map (list, read, parse every source file,
graph, rank, fit 8k tokens), the same map again with nothing changed, and the map after one
file is edited (that file alone is parsed again), each twice: as a server with a page open
sees it (a file watcher runs: the edit is made on disk and its file event handed to the map
as the watcher hands it, `heard.changed`), and with no watcher (every build lists the
repository and stats every source file). The symbols alone are also timed, to show what is
parsing and what is ranking. Peak memory is the process's max RSS (Django loaded), before
and after. Figures, never assertions.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import django as django_package

from bench.django_env import close_database, setup_django
from bench.report import QUICK_NOTE, machine, machine_line, markdown_table

GOAL_COLD_S = 5.0
GOAL_INCREMENTAL_S = 0.05
GOAL_PEAK_MB = 300
BUDGET = 8000
SELECTED = "django/db/models/query.py"
EDITED = "django/utils/text.py"
QUICK_FOLDERS = ("django/utils", "django/db/models")
REPEATS = 5  # the small figures are the median of this many builds


def _max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _copy_source(source: Path, repo: Path, quick: bool) -> int:
    if quick:
        for folder in QUICK_FOLDERS:
            shutil.copytree(source / folder.split("/", 1)[1], repo / folder)
    else:
        shutil.copytree(source, repo / "django", ignore=shutil.ignore_patterns("__pycache__"))
    git = ["git", "-C", str(repo)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run(
        [*git, "-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-qm", "s"],
        check=True,
    )
    return sum(1 for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts)


def _cpu() -> float:
    """CPU seconds of this process and of its children that ended (the parsing pool's
    workers, git)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _timed(function) -> tuple[Any, float, float]:
    """(value, wall seconds, CPU seconds with the children's): on a shared machine the
    CPU time says what the work costs, the wall time what the load made of it."""
    start, cpu = time.perf_counter(), _cpu()
    value = function()
    return value, time.perf_counter() - start, _cpu() - cpu


def _median(step, *, timed: bool = True) -> tuple[Any, float, float]:
    """The last value of `REPEATS` runs of `step(turn)`, and the median wall and CPU
    seconds (`step` times itself when not `timed`: what it does first is not counted)."""
    runs = [
        _timed(lambda turn=turn: step(turn)) if timed else step(turn) for turn in range(REPEATS)
    ]
    walls, cpus = sorted(r[1] for r in runs), sorted(r[2] for r in runs)
    return runs[-1][0], walls[REPEATS // 2], cpus[REPEATS // 2]


def _edit(repo: Path, name: str, stamp: int) -> None:
    """A function added to the edited file, with a stamp no earlier look has seen."""
    edited = repo / EDITED
    edited.write_text(
        edited.read_text() + f"\n\ndef {name}(value: str) -> str:\n    return value\n"
    )
    os.utime(edited, ns=(stamp, stamp))


def measure(repo: Path) -> dict[str, Any]:
    from chat.repo.repomap.builder import RepoMaps
    from chat.repo.repomap.symbols import language_of
    from contextcore.tokens import TokenCounter

    counter = TokenCounter()
    rss_before = _max_rss_mb()

    def build(maps: RepoMaps):
        return maps.build(repo, budget=BUDGET, count=counter.count_text, selected=[SELECTED])

    (symbols, parsed), parse_s, parse_cpu = _timed(lambda: RepoMaps().symbols(repo))
    maps = RepoMaps()
    root = repo.resolve()
    maps.heard.watched(root)  # a watcher is on before the first look, as with a page open
    cold, cold_s, cold_cpu = _timed(lambda: build(maps))
    warm, warm_s, warm_cpu = _median(lambda _: build(maps))

    def heard(turn: int):
        _edit(repo, f"bench_heard_{turn}", turn + 1)
        maps.heard.changed(root, [EDITED])  # the watcher's call for the edit's file event
        return _timed(lambda: build(maps))

    incremental, incremental_s, incremental_cpu = _median(heard, timed=False)
    maps.heard.unwatched(root)  # the page closed: from now on every build looks at all
    _, full_warm_s, full_warm_cpu = _median(lambda _: build(maps))

    def unheard(turn: int):
        _edit(repo, f"bench_unheard_{turn}", REPEATS + turn + 1)
        return _timed(lambda: build(maps))

    unheard_map, full_incremental_s, full_incremental_cpu = _median(unheard, timed=False)
    return {
        "files": cold.files,
        "source_files": sum(1 for p in symbols if language_of(p)),
        "definitions": sum(len(s.definitions) for s in symbols.values()),
        "parsed_cold": parsed,
        "symbols_cold_s": parse_s,
        "cold_s": cold_s,
        "warm_s": warm_s,
        "incremental_s": incremental_s,
        "symbols_cold_cpu": parse_cpu,
        "cold_cpu": cold_cpu,
        "warm_cpu": warm_cpu,
        "incremental_cpu": incremental_cpu,
        "full_warm_s": full_warm_s,
        "full_warm_cpu": full_warm_cpu,
        "full_incremental_s": full_incremental_s,
        "full_incremental_cpu": full_incremental_cpu,
        "parsed_full_incremental": unheard_map.parsed,
        "parsed_incremental": incremental.parsed,
        "parsed_warm": warm.parsed,
        "map_tokens": counter.count_text(cold.main),
        "map_same_when_unchanged": warm.main == cold.main,
        "rss_before_mb": rss_before,
        "rss_peak_mb": _max_rss_mb(),
        "workers": maps.workers,
    }


def map_markdown(data: dict[str, Any], info: dict[str, Any], quick: bool) -> str:
    def seconds(name: str) -> list[str]:
        return [f"{data[name + '_s']:.2f} s", f"{data.get(name + '_cpu', 0.0):.2f} s"]

    def millis(name: str) -> list[str]:
        return [
            f"{data[name + '_s'] * 1000:.0f} ms",
            f"{data.get(name + '_cpu', 0.0) * 1000:.0f} ms",
        ]

    peak = f"{data['rss_peak_mb']:.0f} MB (before: {data['rss_before_mb']:.0f} MB)"
    rows = [
        ["symbols alone, cold (list, read, parse)", *seconds("symbols_cold"), ""],
        [
            "cold map (symbols, graph, rank, fit)",
            *seconds("cold"),
            _goal(data["cold_s"], GOAL_COLD_S, "≤ 5 s"),
        ],
        ["same map, nothing changed (watcher running)", *millis("warm"), ""],
        [
            f"one file edited, its event heard ({data['parsed_incremental']} parsed)",
            *millis("incremental"),
            _goal(data["incremental_s"], GOAL_INCREMENTAL_S, "≤ 50 ms"),
        ],
        ["same map, nothing changed (no watcher: full look)", *millis("full_warm"), ""],
        [
            f"one file edited, no watcher ({data['parsed_full_incremental']} parsed)",
            *millis("full_incremental"),
            "",
        ],
        [
            "peak memory (max RSS, Django loaded)",
            peak,
            "",
            _goal(data["rss_peak_mb"], GOAL_PEAK_MB, "≤ 300 MB"),
        ],
    ]
    lines = [
        f"Django's source: {data['files']:,} files, {data['source_files']:,} with a grammar, "
        f"{data['definitions']:,} definitions; map of {data['map_tokens']:,} tokens "
        f"(budget {BUDGET:,}), selection {SELECTED}; parsed in {data.get('workers', 1)} "
        f"worker processes when cold; the small figures are medians of {REPEATS} builds.",
        "",
        markdown_table(["step", "time", "CPU (process + workers)", "goal"], rows, "lrrl"),
        "",
        machine_line(info) + ".",
    ]
    if quick:
        lines += ["", QUICK_NOTE]
    return "\n".join(lines)


def _goal(value: float, goal: float, text: str) -> str:
    return f"{text}: {'met' if value <= goal else 'missed'}"


def run(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    source = Path(getattr(args, "source", None) or Path(django_package.__file__).parent)
    info = {**machine(), "load": Path("/proc/loadavg").read_text().split()[:3]}
    with tempfile.TemporaryDirectory(prefix="acdc-map-bench-") as folder:
        repo, data_dir = Path(folder) / "repo", Path(folder) / "data"
        repo.mkdir()
        data_dir.mkdir()
        _copy_source(source, repo, args.quick)
        setup_django(repo, data_dir)
        try:
            data = measure(repo)
        finally:
            close_database()
    info["load_after"] = Path("/proc/loadavg").read_text().split()[:3]
    return map_markdown(data, info, args.quick), {**data, "machine": info}
