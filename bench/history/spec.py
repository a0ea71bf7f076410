"""The history benchmark's store: its sizes and where it is kept.

Read by both sides: `history_bench`, which chooses the sizes and reports, and `store`,
which builds the store through the ORM. Neither imports the other's module for them, and
this one imports nothing of Django.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

CACHE_ROOT = Path.home() / ".cache" / "acdc"


@dataclass(frozen=True)
class HistorySpec:
    sessions: int = 10_000
    messages: int = 1_000_000
    runs: int = 20


QUICK = HistorySpec(sessions=40, messages=4_000, runs=3)


def store_folder(spec: HistorySpec) -> Path:
    return CACHE_ROOT / f"bench-history-{spec.sessions}-{spec.messages}"
