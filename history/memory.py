"""The working histories of the sessions this process served lately, kept in memory.

Seed 000's search fallback: when the store cannot answer (or finds nothing), search still
looks through the conversations the context engine holds. A session's context records its
working history in the process's `WorkingHistories` (the served object's) whenever it saves
it; a bounded number of the most recent sessions is kept. Plain Python, no database: it
must work when the database does not.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

MAX_SESSIONS = 20


@dataclass(frozen=True)
class Remembered:
    session_id: str
    repository: str
    title: str
    history: tuple[dict[str, Any], ...]


class WorkingHistories:
    """The working histories of the `MAX_SESSIONS` sessions this process saved last, newest
    last; one per process, held by the served object (`chat.live.served`) and handed to
    the contexts that save them and to the search that falls back on them."""

    def __init__(self) -> None:
        self._recent: OrderedDict[str, Remembered] = OrderedDict()
        self._lock = threading.Lock()

    def remember(
        self, session_id: str, repository: str, title: str, history: Sequence[dict[str, Any]]
    ) -> None:
        """Keep `history`'s entries as they are, not copied: the caller hands over entries
        it will not change (search reads their role, content and id)."""
        entry = Remembered(session_id, repository, title, tuple(history))
        with self._lock:
            self._recent.pop(session_id, None)
            self._recent[session_id] = entry
            while len(self._recent) > MAX_SESSIONS:
                self._recent.popitem(last=False)

    def sessions(self, repository: str) -> list[Remembered]:
        """Newest first."""
        with self._lock:
            return [e for e in reversed(self._recent.values()) if e.repository == repository]
