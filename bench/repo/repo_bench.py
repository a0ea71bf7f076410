"""The repository benchmark: the Files panel's tree and token counts on a big repository.

A synthetic repository (100,000 files, ~60 MB of code-shaped text in 1,000 folders,
committed to git) is listed and turned into the picker's payload (what the page needs to
draw the tree), then counted: cold (empty cache: read, hash, encode, store), compared with
tiktoken's raw throughput on the same texts with two threads; warm in the same process
(stat only); and warm in a new process (a subprocess: read and hash every file, counts
from the table), with the page cache as it is and with the files evicted from it; then
the credential scan on as many files of a realistic mix of sizes (`credential_scan`).
git's auto-gc is off in the bench repository, so no background gc writes into `.git`
while the folder is deleted. The timings are taken in `bench.repo.timings`, on
Django set up in a throwaway folder. Figures, never assertions.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench.django_env import close_database, setup_django
from bench.repo import credential_scan
from bench.report import QUICK_NOTE, machine, machine_line, markdown_table
from bench.sessions import _function

GOAL_FIRST_FRAME_S = 1.0
GOAL_COLD_RATIO = 0.8
GOAL_WARM_S = 1.0


@dataclass(frozen=True)
class RepoSpec:
    files: int = 100_000
    folders: int = 1_000
    lines_per_file: int = 9  # ~600 bytes a file: ~60 MB for 100,000


QUICK = RepoSpec(files=2_000, folders=40)


def build_repo(root: Path, spec: RepoSpec) -> int:
    """Write the files and commit them; returns the bytes written."""
    rng = random.Random(5)
    written = 0
    per_folder = max(1, spec.files // spec.folders)
    for n in range(spec.files):
        folder = root / f"pkg_{n // per_folder:04}"
        folder.mkdir(parents=True, exist_ok=True)
        text = f"# module {n}\n" + _function(rng, f"step_{n}", spec.lines_per_file)
        (folder / f"mod_{n:06}.py").write_text(text)
        written += len(text)
    git = ["git", "-C", str(root), "-c", "user.email=b@acdc", "-c", "user.name=bench"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "config", "gc.auto", "0"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "bench"], check=True)
    return written


def repo_markdown(result: dict[str, Any]) -> str:
    first = result["list_s"] + result["payload_s"]
    rows = [
        ["tree listed (git ls-files)", f"{result['list_s']:.2f} s", ""],
        [
            "picker payload ready (tree, badges, known counts)",
            f"{first:.2f} s",
            f"< {GOAL_FIRST_FRAME_S:.0f} s: {'met' if first < GOAL_FIRST_FRAME_S else 'NOT met'}",
        ],
        ["tiktoken raw, 2 threads", f"{result['raw_tiktoken_mb_s']} MB/s", ""],
        [
            "cold count (read, hash, encode, store)",
            f"{result['cold_s']:.1f} s, {result['cold_mb_s']} MB/s "
            f"({result['cold_ratio']:.2f}x raw)",
            f"≥ {GOAL_COLD_RATIO}x: "
            + ("met" if result["cold_ratio"] >= GOAL_COLD_RATIO else "NOT met"),
        ],
        [
            "warm, same process (stat only)",
            f"{result['warm_same_process_s']:.2f} s",
            f"< {GOAL_WARM_S:.0f} s: "
            + ("met" if result["warm_same_process_s"] < GOAL_WARM_S else "NOT met"),
        ],
        [
            "warm, new process, page cache warm (read + hash, counts from the table)",
            f"{result['new_process_warm_cache_s']:.2f} s",
            "",
        ],
        [
            f"warm, new process, page cache {result['new_process_page_cache']}",
            f"{result['new_process_cold_cache_s']:.2f} s",
            "",
        ],
    ]
    table = markdown_table(["step", "time", "goal"], rows, "lrl")
    head = f"{result['files']:,} files, {result['megabytes']} MB of text, committed to git."
    return head + "\n\n" + table


def run(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """`acdc bench repo`: the markdown report and its data."""
    spec = QUICK if args.quick else RepoSpec()
    if args.files:
        spec = replace(spec, files=args.files, folders=max(1, args.files // 100))
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="acdc-bench-") as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        print(f"acdc bench repo: writing {spec.files:,} files…", file=sys.stderr, flush=True)
        size = build_repo(repo, spec)
        setup_django(repo, Path(tmp) / "data")
        # Lazy: the timings import chat's models, which load only once Django is set up here.
        from bench.repo import timings

        result = timings.measure(repo, size, Path(tmp) / "data")
        close_database()
        print("acdc bench repo: the credential scan…", file=sys.stderr, flush=True)
        scan = credential_scan.measure(Path(tmp) / "scan", spec.files)
    info = machine()
    lines = [
        "## acdc bench repo",
        "",
        machine_line(info) + f"; took {time.perf_counter() - started:.1f} s.",
        "",
        repo_markdown(result),
        "",
        credential_scan.markdown(scan),
        *(["", QUICK_NOTE] if args.quick else []),
    ]
    return "\n".join(lines), {"machine": info, **result, "credential_scan": scan}
