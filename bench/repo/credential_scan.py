"""The credential scan's cost on a large repository, for `acdc bench repo`.

100,000 code-shaped files of a realistic mix of sizes (log-normal: median about 1 KB, a
tail of files up to 200 KB; one in a thousand holds a credential) are written to a
temporary folder and read back, then scanned the way acdc scans what it sends
(`chat.repo.credentials.redact`): cold (hash, one combined pattern, cache), warm (hash and
lookup) and without the cache, and two simple alternatives: one combined pattern, and a
search per shape led by \\b (what the scan was before); both try every position, so they
run on a sample and are scaled up. Reading is timed apart (a turn reads its files anyway).
Figures, never assertions.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.report import markdown_table
from bench.sessions import _function

MEDIAN_BYTES = 1_000
SIGMA = 1.0
MAX_BYTES = 200_000
CREDENTIAL_EVERY = 1_000
SAMPLE_EVERY = 50
# Built from parts so that no scanner takes the benchmark for a leak of its own.
_PLANTED = 'GITHUB_TOKEN = "ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"\n'


def write_files(root: Path, files: int, seed: int = 11) -> int:
    """Write the files (100 to a folder); returns the bytes written."""
    rng = random.Random(seed)
    written = 0
    for n in range(files):
        size = min(MAX_BYTES, max(80, int(rng.lognormvariate(0, SIGMA) * MEDIAN_BYTES)))
        parts, length, index = [f"# module {n}\n"], 0, 0
        while length < size:
            piece = _function(rng, f"step_{index}", 8)
            parts.append(piece)
            length += len(piece)
            index += 1
        if n % CREDENTIAL_EVERY == CREDENTIAL_EVERY // 2:
            parts.insert(1, _PLANTED)
        text = "".join(parts)
        folder = root / f"pkg_{n // 100:04}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod_{n:06}.py").write_text(text)
        written += len(text)
    return written


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    started = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - started


def measure(root: Path, files: int) -> dict[str, Any]:
    """Write, read and scan; the seconds of each way of scanning. The two slow
    alternatives run on every `SAMPLE_EVERY`th file and are scaled up to all of them."""
    from chat.repo import credentials

    root.mkdir(parents=True, exist_ok=True)
    written = write_files(root, files)
    paths = sorted(str(p) for p in root.rglob("*.py"))
    texts, read_s = _timed(lambda: [Path(p).read_text() for p in paths])
    credentials._CACHE.clear()
    found, cold_s = _timed(lambda: sum(bool(credentials.redact(t).found) for t in texts))
    _, warm_s = _timed(lambda: [credentials.redact(t) for t in texts])
    _, uncached_s = _timed(lambda: [credentials._scan(t) for t in texts])
    sample = texts[::SAMPLE_EVERY]
    share = sum(map(len, sample)) / sum(map(len, texts))
    combined, per_shape = _combined(credentials), _per_shape(credentials)
    _, combined_s = _timed(lambda: [list(combined.finditer(t)) for t in sample])
    _, per_shape_s = _timed(lambda: [[p.search(t) for p in per_shape] for t in sample])
    sizes = sorted(len(t) for t in texts)
    credentials._CACHE.clear()
    return {
        "files": len(texts),
        "megabytes": round(sum(sizes) / 1e6, 1),
        "written_bytes": written,
        "median_bytes": sizes[len(sizes) // 2],
        "p99_bytes": sizes[int(len(sizes) * 0.99)],
        "largest_bytes": sizes[-1],
        "with_credentials": found,
        "read_s": round(read_s, 2),
        "cold_s": round(cold_s, 2),
        "warm_s": round(warm_s, 2),
        "uncached_s": round(uncached_s, 2),
        "combined_s": round(combined_s / share, 1),
        "per_shape_s": round(per_shape_s / share, 1),
        "sample_every": SAMPLE_EVERY,
    }


def _combined(credentials: Any) -> re.Pattern[str]:
    """Every shape in one alternation (named groups renamed apart), case-blind where the
    scan folds: the simplest single pass."""
    parts = []
    for index, (_, pattern, how) in enumerate(credentials._SHAPES):
        renamed = re.sub(r"\(\?P<(\w+)>", rf"(?P<\g<1>{index}>", pattern)
        renamed = re.sub(r"\(\?P=(\w+)\)", rf"(?P=\g<1>{index})", renamed)
        parts.append(f"(?i:{renamed})" if how in credentials.FOLDED else rf"\b{renamed}")
    return re.compile("|".join(parts))


def _per_shape(credentials: Any) -> list[re.Pattern[str]]:
    """One search per shape, each starting with \\b (case-blind where the scan folds):
    how the scan was written before it was measured."""
    return [
        re.compile(f"(?i:{pattern})" if how in credentials.FOLDED else rf"\b{pattern}")
        for _, pattern, how in credentials._SHAPES
    ]


def markdown(result: dict[str, Any]) -> str:
    mb = result["megabytes"]

    def row(name: str, key: str) -> list[str]:
        seconds = result[key]
        rate = f"{mb / seconds:.0f} MB/s" if seconds else "—"
        per_file = f"{seconds / result['files'] * 1e6:.0f} µs"
        return [name, f"{seconds:.2f} s", rate, per_file]

    rows = [
        row("read the files (not part of the scan)", "read_s"),
        row("scan, cold: hash + a search per shape + cache", "cold_s"),
        row("scan, warm: hash + cache lookup", "warm_s"),
        row("the same scan without the cache (every time)", "uncached_s"),
        row(f"one combined pattern (1 file in {result['sample_every']}, scaled)", "combined_s"),
        row(f"a \\b-led search per shape (1 in {result['sample_every']}, scaled)", "per_shape_s"),
    ]
    head = (
        f"Credential scan: {result['files']:,} files, {mb} MB (median "
        f"{result['median_bytes']:,} B, 99th percentile {result['p99_bytes']:,} B, largest "
        f"{result['largest_bytes']:,} B); {result['with_credentials']} hold a credential."
    )
    table = markdown_table(["step", "time", "rate", "per file"], rows, "lrrr")
    return head + "\n\n" + table
