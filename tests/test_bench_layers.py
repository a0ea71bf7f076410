"""The benchmarks' layout, read from the source: rooms by subject, one-way imports, small
modules.

`bench/` holds a folder per subject (`acdc bench cache` is bench/cache/, its entry module
cache_bench.py), the loopback provider fakes (bench/wirefakes/) and, at its root, the few
modules every benchmark shares (the runner, the report, the scripted sessions, Django's
set-up, `acdc serve` in subprocesses). No import cycle among them, counting imports inside
functions too (a benchmark keeps its Django models lazy, and a lazy import back is still a
cycle); modules and folders as small as the product's (tests/test_layers.py).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from bench.runner import BENCHMARKS
from tests.test_layers import CROWDED_FOLDER_MODULES as MAX_MODULES_PER_FOLDER
from tests.test_layers import LONG_MODULE_LINES as MAX_MODULE_LINES
from tests.test_layers import ROOT, _cycles, _imports

BENCH = ROOT / "bench"


def _bench_modules(root: Path) -> dict[str, Path]:
    """Every module of the `bench` package under `root`, by dotted name."""
    found = {}
    for path in sorted((root / "bench").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def bench_graph(root: Path) -> dict[str, set[str]]:
    """Who imports whom among the bench modules under `root`, at the top or in a function;
    `from bench.x import y` counts as an import of bench.x.y when that is a module."""
    modules = _bench_modules(root)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for found in _imports(path, module=name):
            target = found.target
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                graph[name].add(target)
    return graph


def long_modules(root: Path) -> list[str]:
    return [
        f"{path.relative_to(root)}: {lines}"
        for path in _bench_modules(root).values()
        if (lines := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    ]


def crowded_folders(root: Path) -> list[str]:
    folders = [root / "bench", *(p for p in (root / "bench").rglob("*") if p.is_dir())]
    return [
        f"{folder.relative_to(root)}: {count}"
        for folder in folders
        if (count := len(list(folder.glob("*.py")))) > MAX_MODULES_PER_FOLDER
    ]


def test_the_bench_modules_import_one_way():
    graph = bench_graph(ROOT)
    assert len(graph) > 40  # the scan sees the benchmarks, not an empty folder
    assert _cycles(graph) == []


def test_no_bench_module_is_too_long_and_no_bench_folder_too_crowded():
    assert (long_modules(ROOT), crowded_folders(ROOT)) == ([], [])


def test_every_benchmark_the_runner_names_is_a_module_in_a_room():
    """`acdc bench NAME` imports BENCHMARKS[NAME] only when chosen; each is found, and none
    lives at bench/'s root, which is for what the benchmarks share."""
    missing = [m for m in BENCHMARKS.values() if importlib.util.find_spec(m) is None]
    at_root = [m for m in BENCHMARKS.values() if m.count(".") < 2]
    assert (missing, at_root) == ([], [])


def test_the_bench_scans_see_what_they_look_for(tmp_path):
    room = tmp_path / "bench" / "room"
    room.mkdir(parents=True)
    (tmp_path / "bench" / "__init__.py").write_text("")
    (room / "__init__.py").write_text("")
    (room / "a.py").write_text("from bench.room.b import B\n")
    (room / "b.py").write_text("B = 1\ndef later():\n    from . import a\n")
    (room / "c.py").write_text("from bench import room\n" + "x = 1\n" * MAX_MODULE_LINES)
    for n in range(MAX_MODULES_PER_FOLDER - 1):  # and __init__.py: the most a folder holds
        (tmp_path / "bench" / f"m{n}.py").write_text("")
    assert _cycles(bench_graph(tmp_path)) == [["bench.room.a", "bench.room.b"]]
    assert bench_graph(tmp_path)["bench.room.c"] == {"bench.room"}
    assert long_modules(tmp_path) == [f"bench/room/c.py: {MAX_MODULE_LINES + 1}"]
    assert crowded_folders(tmp_path) == []
    (tmp_path / "bench" / "one_more.py").write_text("")
    assert crowded_folders(tmp_path) == [f"bench: {MAX_MODULES_PER_FOLDER + 1}"]
