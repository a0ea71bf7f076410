"""Grounding (seed 003, issue 6 item 7): earlier summaries and pinned notes worth recalling.

Before a turn, the newest user message is matched against this repository's compaction
summaries and pinned messages, from any session, with the full-text index (any of its
words, ranked; FTS5 bm25 on SQLite, ts_rank on PostgreSQL; a plain word-overlap scan
where neither is available). Each item carries a relevance in 0..1: the share of the
message's words it contains, which the quality score averages.

Non-goals: where the items go in the prompt, and the budget (the chat turn decides).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db import DatabaseError, connection, transaction
from django.db.models import Q

from history.models import Message
from history.search import pending

COMPACTION_PREFIX = "History compacted"
MAX_TERMS = 12
CANDIDATE_FACTOR = 4
_WORD = re.compile(r"[^\W_]{3,}")
_STOP_WORDS = """the and for with that this from have what when where which will would could
should there their about into your you are was were been being can not but all any how why
let lets use using make does did done just like also then than them they its"""
_STOP = frozenset(_STOP_WORDS.split())


@dataclass(frozen=True)
class RelatedItem:
    kind: str  # "summary" | "pinned"
    text: str
    session_id: str
    message_id: str
    relevance: float


def query_terms(text: str) -> list[str]:
    seen: dict[str, None] = {}
    for word in _WORD.findall((text or "").lower()):
        if word not in _STOP:
            seen.setdefault(word)
    return list(seen)[:MAX_TERMS]


def _candidates() -> Q:
    compaction = Q(system_event=True, content__startswith=COMPACTION_PREFIX)
    return (Q(pinned=True) | compaction) & Q(rolled_back=False)


def related_context(
    *, repository: str, text: str, limit: int = 5, exclude_ids: tuple[str, ...] = ()
) -> list[RelatedItem]:
    """The `limit` most relevant summaries and pinned notes for `text`, best first."""
    terms = query_terms(text)
    if not terms or limit <= 0:
        return []
    ids = _ranked_ids(terms, repository, limit * CANDIDATE_FACTOR)
    rows = Message.objects.filter(_candidates(), session__repository=repository)
    rows = rows.exclude(pk__in=exclude_ids)
    if ids is not None:
        rows = rows.filter(pk__in=ids)
    items = [_item(m, terms) for m in rows.only("id", "session_id", "content", "pinned")]
    items = [i for i in items if i.relevance > 0]
    items.sort(key=lambda i: (-i.relevance, i.message_id))
    return items[:limit]


def _item(message: Message, terms: list[str]) -> RelatedItem:
    words = set(_WORD.findall(message.content.lower()))
    relevance = sum(1 for t in terms if t in words) / len(terms)
    kind = "pinned" if message.pinned else "summary"
    return RelatedItem(kind, message.content, message.session_id, message.id, round(relevance, 3))


def _ranked_ids(terms: list[str], repository: str, limit: int) -> list[str] | None:
    """Ids of the best full-text matches among the candidates; None without an index."""
    runner = {"sqlite": _sqlite_ids, "postgresql": _postgres_ids}.get(connection.vendor)
    if runner is None or not pending.caught_up():
        return None
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            return runner(cursor, terms, repository, limit)
    except DatabaseError:
        return None


def _sqlite_ids(cursor, terms: list[str], repository: str, limit: int) -> list[str]:
    match = " OR ".join(f'"{t}"' for t in terms)
    cursor.execute(
        """
        SELECT m.id FROM history_message_fts f
        JOIN history_message m ON m.rowid = f.rowid
        JOIN history_session s ON s.id = m.session_id
        WHERE history_message_fts MATCH %s AND s.repository = %s AND m.rolled_back = 0
          AND (m.pinned = 1 OR (m.system_event = 1 AND m.content LIKE %s))
        ORDER BY bm25(history_message_fts) LIMIT %s""",
        [match, repository, COMPACTION_PREFIX + "%", limit],
    )
    return [row[0] for row in cursor.fetchall()]


def _postgres_ids(cursor, terms: list[str], repository: str, limit: int) -> list[str]:
    cursor.execute(
        """
        WITH q AS (SELECT to_tsquery('english', %s) AS query)
        SELECT m.id FROM history_message m JOIN history_session s ON s.id = m.session_id, q
        WHERE m.search_vector @@ q.query AND s.repository = %s AND NOT m.rolled_back
          AND (m.pinned OR (m.system_event AND m.content LIKE %s))
        ORDER BY ts_rank(m.search_vector, q.query) DESC LIMIT %s""",
        [" | ".join(terms), repository, COMPACTION_PREFIX + "%", limit],
    )
    return [row[0] for row in cursor.fetchall()]


def format_related(items: list[RelatedItem]) -> str:
    """The "Related context" section's text."""
    lines = []
    for item in items:
        label = "Pinned note" if item.kind == "pinned" else "Earlier summary"
        lines.append(f"- {label} (session {item.session_id}): {item.text.strip()}")
    return "\n".join(lines)
