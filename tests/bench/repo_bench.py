"""The repository benchmark: the Files panel's tree and token counts on a big repository.

A synthetic repository (100,000 files, ~60 MB of code-shaped text in 1,000 folders,
committed to git) is listed and turned into the picker's payload (what the page needs to
draw the tree), then counted: cold (empty cache: read, hash, encode, store), compared with
tiktoken's raw throughput on the same texts with two threads; warm in the same process
(stat only); and warm in a fresh process (read and hash every file, counts from the
table). Figures, never assertions.
"""

from __future__ import annotations

import random
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.bench.report import markdown_table
from tests.bench.sessions import _function

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
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "bench"], check=True)
    return written


def _timed(fn, *args):
    started = time.perf_counter()
    value = fn(*args)
    return value, time.perf_counter() - started


def measure(root: Path, size: int) -> dict[str, Any]:
    from chat.repo import picker

    paths, listing_s = _timed(picker.list_files, root)
    payload, payload_s = _timed(picker.tree_payload, root, [], [], 200_000)
    texts = [(root / p).read_text() for p in paths]
    encoding = picker.token_counter_encoding()
    started = time.perf_counter()
    encoding.encode_ordinary_batch(texts, num_threads=2)
    raw_s = time.perf_counter() - started
    texts.clear()
    from chat.models import TokenCount

    TokenCount.objects.all().delete()
    counts = picker.TokenCounts()
    _, cold_s = _timed(counts.count, root, paths)
    _, warm_same_s = _timed(counts.count, root, paths)
    _, warm_fresh_s = _timed(picker.TokenCounts().count, root, paths)
    mb = size / 1e6
    return {
        "files": len(paths),
        "megabytes": round(mb, 1),
        "list_s": round(listing_s, 3),
        "payload_s": round(payload_s, 3),
        "payload_bytes": len(str(payload)),
        "raw_tiktoken_mb_s": round(mb / raw_s, 1),
        "cold_s": round(cold_s, 2),
        "cold_mb_s": round(mb / cold_s, 1),
        "cold_ratio": round(raw_s / cold_s, 2),
        "warm_same_process_s": round(warm_same_s, 3),
        "warm_fresh_process_s": round(warm_fresh_s, 3),
    }


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
            "warm, new process (read + hash, counts from the table)",
            f"{result['warm_fresh_process_s']:.2f} s",
            "",
        ],
    ]
    table = markdown_table(["step", "time", "goal"], rows, "lrl")
    head = f"{result['files']:,} files, {result['megabytes']} MB of text, committed to git."
    return head + "\n\n" + table
