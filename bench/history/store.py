"""The synthetic session store for `acdc bench history`, and the timings taken on it.

The store is built through the ORM, so the word and trigram indexes are filled by the same
triggers as in use; deterministic (seeded). Words are drawn from a fixed vocabulary:
"function" is common, "kumquat" rare, "error handling" a phrase; "unctio" and "mquat" are
parts of words only. The newest session has 1,000 messages, which is what load and restore
measure. Imports the models, so it loads only after Django
is set up on the store's folder (`history_bench.run` imports it then).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from django.db import transaction
from django.utils import timezone

from bench.history.spec import HistorySpec
from chat.live.served import served
from chat.session.setchanges import restore_latest_session
from history import selectors
from history.models import Message, Session
from history.search import search_messages

BATCH = 5_000
COMMON, RARE, PHRASE = "function", "kumquat", "error handling"
# Parts of those words, found only by the trigram index (no word in the store is either).
COMMON_PART, RARE_PART = "unctio", "mquat"
BIG_SESSION_MESSAGES = 1_000


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
    newest = selectors.session_latest(repository=repository)
    checks: dict[str, Callable[[], Any]] = {
        "search, common word": lambda: search_messages(repository=repository, query=COMMON),
        "search, rare word": lambda: search_messages(repository=repository, query=RARE),
        "search, phrase": lambda: search_messages(repository=repository, query=PHRASE),
        "search, part of a common word": lambda: search_messages(
            repository=repository, query=COMMON_PART
        ),
        "search, part of a rare word": lambda: search_messages(
            repository=repository, query=RARE_PART
        ),
        "list sessions (50)": lambda: selectors.list_sessions(repository=repository, limit=50),
        "load a 1,000-message session": lambda: selectors.session_messages(session=newest),
        "start-up restore": lambda: restore_latest_session(repository, served()),
    }
    return {name: _timed(action, spec.runs) for name, action in checks.items()}
