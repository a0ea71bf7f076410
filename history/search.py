"""Full-text search over the messages of a repository's sessions: ranked hits with snippets.

SQLite uses the external-content FTS5 table of migration 0009 (joined to its message by
rowid; snippets read the message's own text) and PostgreSQL the tsvector column of 0004
(raw SQL: the index is not a model field, and the ORM's Coalesce would not match it).
User text is never query syntax: each term is quoted for FTS5, and PostgreSQL parses it
with plainto_tsquery. A query without indexable words, or a backend without an index,
falls back to a case-insensitive substring match. Snippets come back as parts (text,
marked) so templates escape everything and add the <mark> tags themselves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.db import DatabaseError, connection, transaction

from history import memory
from history.models import Message

MAX_QUERY_CHARS = 200
MAX_LIMIT = 100
SNIPPET_RADIUS = 80
START, STOP = "\ue000", "\ue001"  # private-use sentinels: never in a cleaned query
# ts_headline drops anything that parses as an HTML tag, so angle brackets go in disguised.
LT, GT = "\ue002", "\ue003"
_MARKED = re.compile(f"{START}(.*?){STOP}", re.S)
_INDEXABLE = re.compile(r"[^\W_]")
_HEADLINE = f"StartSel={START}, StopSel={STOP}, MaxWords=30, MinWords=12, MaxFragments=2"


@dataclass(frozen=True)
class SnippetPart:
    text: str
    marked: bool = False


@dataclass(frozen=True)
class SearchHit:
    message_id: str
    session_id: str
    session_title: str
    role: str
    timestamp: datetime
    parts: tuple[SnippetPart, ...]
    image_shas: tuple[str, ...] = ()


@dataclass(frozen=True)
class SearchResults:
    query: str
    truncated: bool = False
    mode: str = "empty"  # "ranked", "substring" or "empty"
    hits: list[SearchHit] = field(default_factory=list)


CANDIDATES = 2_000


def clean_query(raw: str) -> tuple[str, bool]:
    """Printable text with single spaces, at most MAX_QUERY_CHARS; and whether it was cut."""
    printable = "".join(ch if ch.isprintable() else " " for ch in raw or "")
    text = " ".join(printable.split())
    if len(text) <= MAX_QUERY_CHARS:
        return text, False
    return text[:MAX_QUERY_CHARS].rstrip(), True


def fts5_query(text: str) -> str:
    """Each whitespace-separated term as an FTS5 string, so no user text is FTS syntax."""
    terms = [t for t in text.split() if _INDEXABLE.search(t)]
    return " ".join('"' + t.replace('"', '""') + '"' for t in terms)


def search_messages(
    *, repository: str, query: str, role: str | None = None, limit: int = 20
) -> SearchResults:
    text, truncated = clean_query(query)
    if not text:
        return SearchResults(query=text, truncated=truncated)
    limit = max(1, min(int(limit), MAX_LIMIT))
    mode = "ranked"
    try:
        hits = _ranked(text, repository, role, limit)
        if hits is None:
            mode, hits = "substring", _substring(text, repository, role, limit)
    except DatabaseError:
        hits = []  # the store failed: the in-memory histories below still answer
    if not hits:
        remembered = _in_memory(text, repository, role, limit)
        if remembered:
            return SearchResults(query=text, truncated=truncated, mode="memory", hits=remembered)
    return SearchResults(query=text, truncated=truncated, mode=mode, hits=hits)


def _in_memory(text: str, repository: str, role: str | None, limit: int) -> list[SearchHit]:
    """Seed 000's fallback: a case-insensitive match in the working histories this
    process holds (see history.memory), newest session first."""
    needle = text.casefold()
    now = datetime.now(UTC)
    hits: list[SearchHit] = []
    for session in memory.sessions(repository):
        for message in reversed(session.history):
            content = message.get("content")
            if not isinstance(content, str) or needle not in content.casefold():
                continue
            if role and message.get("role") != role:
                continue
            parts = python_snippet(content, text)
            hits.append(
                SearchHit(
                    message_id=str(message.get("id") or ""),
                    session_id=session.session_id,
                    session_title=session.title,
                    role=str(message.get("role", "")),
                    timestamp=now,
                    parts=parts,
                )
            )
            if len(hits) >= limit:
                return hits
    return hits


def _ranked(text: str, repository: str, role: str | None, limit: int) -> list[SearchHit] | None:
    """Ranked hits, or None when the query has no indexable words or no index exists."""
    runner = {"sqlite": _sqlite_rows, "postgresql": _postgres_rows}.get(connection.vendor)
    if runner is None:
        return None
    try:
        with transaction.atomic():
            rows = runner(text, repository, role, limit)
    except DatabaseError:
        return None
    if rows is None:
        return None
    return _hits(rows)


def _sqlite_rows(text: str, repository: str, role: str | None, limit: int):
    match = fts5_query(text)
    if not match:
        return None
    role_sql, role_params = ("AND m.role = %s", [role]) if role else ("", [])
    # Only the newest CANDIDATES matches are ranked: bm25 over every hit of a common word
    # costs seconds on a million messages, and in a chat history recent work matters most.
    # FTS5 walks its rowids (insertion order) backwards cheaply and honours a rowid bound.
    sql = f"""
        SELECT m.id, snippet(history_message_fts, 0, %s, %s, '…', 24)
        FROM history_message_fts f
        JOIN history_message m ON m.rowid = f.rowid
        JOIN history_session s ON s.id = m.session_id
        WHERE history_message_fts MATCH %s AND f.rowid >= (
            SELECT coalesce(min(r), 0) FROM (
                SELECT rowid AS r FROM history_message_fts
                WHERE history_message_fts MATCH %s ORDER BY rowid DESC LIMIT %s))
          AND s.repository = %s {role_sql}
        ORDER BY bm25(history_message_fts), m.timestamp DESC
        LIMIT %s"""
    params = [START, STOP, match, match, CANDIDATES, repository, *role_params, limit]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _postgres_rows(text: str, repository: str, role: str | None, limit: int):
    with connection.cursor() as cursor:
        cursor.execute("SELECT numnode(plainto_tsquery('english', %s))", [text])
        if not cursor.fetchone()[0]:
            return None
        role_sql, role_params = ("AND m.role = %s", [role]) if role else ("", [])
        sql = f"""
            WITH q AS (SELECT plainto_tsquery('english', %s) AS query),
            top AS (
                SELECT m.id, m.content, m.timestamp, ts_rank(m.search_vector, q.query) AS rank
                FROM history_message m JOIN history_session s ON s.id = m.session_id, q
                WHERE m.search_vector @@ q.query AND s.repository = %s {role_sql}
                ORDER BY rank DESC, m.timestamp DESC LIMIT %s)
            SELECT top.id, ts_headline('english',
                replace(replace(left(top.content, 100000), '<', %s), '>', %s), q.query, %s)
            FROM top, q ORDER BY top.rank DESC, top.timestamp DESC"""
        cursor.execute(sql, [text, repository, *role_params, limit, LT, GT, _HEADLINE])
        return cursor.fetchall()


def _hits(rows: list[tuple[str, str]]) -> list[SearchHit]:
    messages = _messages_by_id([message_id for message_id, _ in rows])
    return [
        _hit(messages[message_id], _marked_parts(snippet))
        for message_id, snippet in rows
        if message_id in messages
    ]


def _substring(text: str, repository: str, role: str | None, limit: int) -> list[SearchHit]:
    rows = Message.objects.filter(session__repository=repository, content__icontains=text)
    if role:
        rows = rows.filter(role=role)
    ids = list(rows.order_by("-timestamp", "-seq").values_list("id", flat=True)[:limit])
    messages = _messages_by_id(ids)
    return [_hit(messages[i], python_snippet(messages[i].content, text)) for i in ids]


def _messages_by_id(ids: list[str]) -> dict[str, Message]:
    rows = Message.objects.filter(pk__in=ids).select_related("session")
    return {m.id: m for m in rows.prefetch_related("image_links")}


def _hit(message: Message, parts: tuple[SnippetPart, ...]) -> SearchHit:
    return SearchHit(
        message_id=message.id,
        session_id=message.session_id,
        session_title=message.session.display_title,
        role=message.role,
        timestamp=message.timestamp,
        parts=parts,
        image_shas=tuple(link.image_id for link in message.image_links.all()),
    )


def _marked_parts(snippet: str) -> tuple[SnippetPart, ...]:
    """Split a database snippet at its sentinels; stray sentinels are dropped."""
    parts: list[SnippetPart] = []
    position = 0
    for found in _MARKED.finditer(snippet):
        parts.append(SnippetPart(_plain(snippet[position : found.start()])))
        parts.append(SnippetPart(_plain(found.group(1)), marked=True))
        position = found.end()
    parts.append(SnippetPart(_plain(snippet[position:])))
    return tuple(p for p in parts if p.text)


def _plain(text: str) -> str:
    return text.replace(START, "").replace(STOP, "").replace(LT, "<").replace(GT, ">")


def python_snippet(content: str, needle: str) -> tuple[SnippetPart, ...]:
    """A window of text around the first case-insensitive occurrence, the match marked."""
    found = re.search(re.escape(needle), content, re.IGNORECASE)
    if found is None:
        cut = content[: 2 * SNIPPET_RADIUS]
        return (SnippetPart(cut + ("…" if len(content) > len(cut) else "")),)
    at, end = found.span()
    start = max(0, at - SNIPPET_RADIUS)
    stop = min(len(content), end + SNIPPET_RADIUS)
    parts = (
        SnippetPart(("…" if start else "") + content[start:at]),
        SnippetPart(content[at:end], marked=True),
        SnippetPart(content[end:stop] + ("…" if stop < len(content) else "")),
    )
    return tuple(p for p in parts if p.text)
