"""`acdc bench history`: search, listing, loading and restore on a large session store.

A synthetic store (1,000,000 messages in 10,000 sessions by default) is built once through
the ORM -- so the full-text index is filled by the same triggers as in use -- and kept in
~/.cache/acdc/ for later runs. The newest session has 1,000 messages, which is what load
and restore measure. Words are drawn from a fixed vocabulary: "function" is common,
"kumquat" rare, "error handling" a phrase. Deterministic (seeded); never a timed test.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CACHE_ROOT = Path.home() / ".cache" / "acdc"
BATCH = 5_000
COMMON, RARE, PHRASE = "function", "kumquat", "error handling"
BIG_SESSION_MESSAGES = 1_000


@dataclass(frozen=True)
class HistorySpec:
    sessions: int = 10_000
    messages: int = 1_000_000
    runs: int = 20


QUICK = HistorySpec(sessions=40, messages=4_000, runs=3)


def store_folder(spec: HistorySpec) -> Path:
    return CACHE_ROOT / f"bench-history-{spec.sessions}-{spec.messages}"


def _vocabulary(rng: random.Random) -> list[str]:
    syllables = ["ka", "lo", "mi", "tra", "ven", "dor", "pi", "su", "rex", "qua", "ne", "zo"]
    words = {"".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(4000)}
    words -= {COMMON, RARE}
    return sorted(words) + ["parser", "token", "module", "test", "cache", "session", "value"]


def _content(rng: random.Random, words: list[str], n: int) -> str:
    picked = [rng.choice(words) for _ in range(rng.randint(15, 60))]
    if rng.random() < 0.3:
        picked.insert(rng.randrange(len(picked)), COMMON)
    if rng.random() < 0.01:
        picked.insert(rng.randrange(len(picked)), PHRASE)
    if n % 20_000 == 7:
        picked.insert(rng.randrange(len(picked)), RARE)
    return " ".join(picked).capitalize() + "."


def build_store(spec: HistorySpec, repository: str, progress: Callable[[int], None]) -> None:
    from django.db import transaction
    from django.utils import timezone

    from history.models import Message, Session

    rng = random.Random(20261122)
    words = _vocabulary(rng)
    sessions = [
        Session(id=f"sess_{1700000000000 + i}_{i:06x}", repository=repository, title=f"Session {i}")
        for i in range(spec.sessions)
    ]
    Session.objects.bulk_create(sessions, batch_size=BATCH)
    plan = _messages_per_session(spec)
    rows: list[Message] = []
    made = 0
    for index, count in enumerate(plan):
        for seq in range(count):
            role = "user" if seq % 2 == 0 else "assistant"
            rows.append(
                Message(
                    id=f"{1700000000000 + made}-{made:08x}",
                    session=sessions[index],
                    seq=seq,
                    role=role,
                    content=_content(rng, words, made),
                )
            )
            made += 1
            if len(rows) >= BATCH:
                with transaction.atomic():
                    Message.objects.bulk_create(rows)
                rows = []
                progress(made)
    with transaction.atomic():
        Message.objects.bulk_create(rows)
    progress(made)
    Session.objects.filter(pk=sessions[0].pk).update(updated_at=timezone.now())


def _messages_per_session(spec: HistorySpec) -> list[int]:
    big = min(BIG_SESSION_MESSAGES, spec.messages // 2)
    rest, others = spec.messages - big, max(1, spec.sessions - 1)
    return [big] + [rest // others + (1 if i < rest % others else 0) for i in range(others)]


def _timed(action: Callable[[], Any], runs: int) -> list[float]:
    action()  # warm: the first call pays for imports and page cache
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def measure(spec: HistorySpec, repository: str) -> dict[str, list[float]]:
    from chat.turn.context import restore_latest_session
    from history import selectors
    from history.search import search_messages

    newest = selectors.session_latest(repository=repository)
    checks: dict[str, Callable[[], Any]] = {
        "search, common word": lambda: search_messages(repository=repository, query=COMMON),
        "search, rare word": lambda: search_messages(repository=repository, query=RARE),
        "search, phrase": lambda: search_messages(repository=repository, query=PHRASE),
        "list sessions (50)": lambda: selectors.list_sessions(repository=repository, limit=50),
        "load a 1,000-message session": lambda: selectors.session_messages(session=newest),
        "start-up restore": lambda: restore_latest_session(repository),
    }
    return {name: _timed(action, spec.runs) for name, action in checks.items()}


GOALS = {
    "search, common word": 50,
    "search, rare word": 50,
    "search, phrase": 50,
    "list sessions (50)": 20,
    "load a 1,000-message session": 50,
    "start-up restore": 1000,
}


def history_markdown(samples: dict[str, list[float]], spec: HistorySpec) -> str:
    lines = [
        f"Store: {spec.messages:,} messages in {spec.sessions:,} sessions (SQLite, FTS5).",
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
