"""The timings of `acdc bench repo`: what the Files panel does on the synthetic repository.

Listing (`chat.repo.git`) and the picker's payload, tiktoken's raw throughput on the
same texts (two threads, the picker's own encoding), then counting through
`chat.repo.picker.TokenCounts`: cold (empty table), warm in the same process, and warm
in a new process (`bench.repo.probe`), once with the page cache as it is and once
with the repository's files evicted from it. Imports chat's models, so it loads only
after Django is set up on the repository (`repo_bench.run` imports it then).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.repo.probe import fresh_process_count
from chat.models import TokenCount
from chat.repo import git, picker
from chat.repo.passes import Passes
from contextcore.tokens import TokenCounter


def _timed(fn: Callable[..., Any], *args: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    value = fn(*args)
    return value, time.perf_counter() - started


def measure(root: Path, size: int, data_dir: Path) -> dict[str, Any]:
    listing, listing_s = _timed(git.list_files, root)
    paths = listing.paths
    # The counts of a fresh process (as its served object builds them): nothing known yet.
    counter = TokenCounter(picker.ENCODING)
    counts = picker.TokenCounts(Passes(), counter)
    payload, payload_s = _timed(picker.tree_payload, root, counts, [])
    texts = [(root / p).read_text() for p in paths]
    encoding = counter.encoding
    started = time.perf_counter()
    encoding.encode_ordinary_batch(texts, num_threads=2)
    raw_s = time.perf_counter() - started
    texts.clear()
    TokenCount.objects.all().delete()
    _, cold_s = _timed(counts.count, root, paths)
    _, warm_same_s = _timed(counts.count, root, paths)
    warm = fresh_process_count(root, data_dir, paths, cold=False)
    cold = fresh_process_count(root, data_dir, paths, cold=True)
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
        "new_process_warm_cache_s": warm["count_s"],
        "new_process_cold_cache_s": cold["count_s"],
        "new_process_page_cache": cold["page_cache"],
    }
