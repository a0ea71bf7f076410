"""The working histories of the sessions this process served lately, kept in memory.

Seed 000's search fallback: when the store cannot answer (or finds nothing), search still
looks through the conversations the context engine holds. `chat.session.setchanges` records each
session's working history here whenever it saves it; a bounded number of the most recent
sessions is kept. Plain Python, no database: it must work when the database does not.
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


_recent: OrderedDict[str, Remembered] = OrderedDict()
_lock = threading.Lock()


def remember(
    session_id: str, repository: str, title: str, history: Sequence[dict[str, Any]]
) -> None:
    """Keep `history`'s entries as they are, not copied: the caller hands over entries it
    will not change (search reads their role, content and id)."""
    entry = Remembered(session_id, repository, title, tuple(history))
    with _lock:
        _recent.pop(session_id, None)
        _recent[session_id] = entry
        while len(_recent) > MAX_SESSIONS:
            _recent.popitem(last=False)


def sessions(repository: str) -> list[Remembered]:
    """Newest first."""
    with _lock:
        return [e for e in reversed(_recent.values()) if e.repository == repository]


def forget_all() -> None:
    with _lock:
        _recent.clear()
