"""Search over the messages of a repository's sessions: ranked hits with snippets.

Seed 000's search is a case-insensitive substring search; acdc ranks it. Messages that
hold every term as a whole word come first (the word index: stems, bm25 or ts_rank), then
messages that hold every term only as a substring, newest first ("keniz" in
"Tokenization", "parse_" in "parse_frame"; the trigram index). The substring pass runs
only when the word pass leaves room under the limit. A query with no term of three
characters or more cannot use a trigram index: it matches whole words only. Without any index
(or when one fails) search falls back to a plain case-insensitive substring match, and
when the store finds nothing, to the histories this process holds (history.memory).
Backends: history.search.sqlite and history.search.postgres; snippets: .hits.
"""

from __future__ import annotations

from datetime import UTC, datetime
from types import MappingProxyType

from django.db import DatabaseError, connection, transaction

from history import memory
from history.models import Message
from history.search import pending, postgres, sqlite
from history.search.hits import (
    SearchHit,
    SearchResults,
    SnippetPart,
    python_snippet,
    substring_hits,
    word_hits,
)
from history.search.terms import MAX_QUERY_CHARS, Terms, clean_query, fts5_query, terms_of

__all__ = (
    "MAX_QUERY_CHARS",
    "SearchHit",
    "SearchResults",
    "SnippetPart",
    "clean_query",
    "fts5_query",
    "python_snippet",
    "search_messages",
)

MAX_LIMIT = 100
_BACKENDS = MappingProxyType({"sqlite": sqlite, "postgresql": postgres})


def search_messages(
    *,
    repository: str,
    query: str,
    role: str | None = None,
    limit: int = 20,
    recent: memory.WorkingHistories | None = None,
) -> SearchResults:
    """The hits for `query`; when the store has none, those of `recent` (the working
    histories the process holds, when the caller has them)."""
    text, truncated = clean_query(query)
    if not text:
        return SearchResults(query=text, truncated=truncated)
    limit = max(1, min(int(limit), MAX_LIMIT))
    terms = terms_of(text)
    try:
        mode, hits = _indexed(terms, repository, role, limit)
    except DatabaseError:
        mode, hits = "ranked", []  # the store failed: the in-memory histories still answer
    if not hits and recent is not None:
        remembered = _in_memory(recent, text, repository, role, limit)
        if remembered:
            return SearchResults(query=text, truncated=truncated, mode="memory", hits=remembered)
    short = mode == "ranked" and not terms.long_pieces
    return SearchResults(query=text, truncated=truncated, mode=mode, hits=hits, short=short)


def _indexed(
    terms: Terms, repository: str, role: str | None, limit: int
) -> tuple[str, list[SearchHit]]:
    """Whole-word hits, then substring hits to fill the limit; or the unindexed fallback."""
    backend = _BACKENDS.get(connection.vendor)
    if backend and not pending.caught_up():
        backend = None  # the index misses the newest messages: read the messages instead
    rows = _guarded(backend.word_rows, terms, repository, role, limit) if backend else None
    words = word_hits(rows) if rows else []
    if len(words) >= limit or not (terms.long_pieces or rows is None):
        return "ranked", words
    found = [hit.message_id for hit in words]
    ids = None
    if backend and terms.long_pieces:
        ids = _guarded(backend.substring_ids, terms, repository, role, limit - len(words), found)
    if ids is None:
        ids = _scanned(terms, repository, role, limit - len(words), found)
    mode = "ranked" if rows is not None else "substring"
    return mode, words + substring_hits(ids, terms.pieces)


def _guarded(run, *args):
    """The backend's answer, or None when its index is missing or refuses the query."""
    try:
        with transaction.atomic():
            return run(*args)
    except DatabaseError:
        return None


def _scanned(
    terms: Terms, repository: str, role: str | None, limit: int, exclude: list[str]
) -> list[str]:
    """Without a usable index: every piece as a case-insensitive substring, newest first."""
    rows = Message.objects.filter(session__repository=repository).exclude(pk__in=exclude)
    for piece in terms.pieces:
        rows = rows.filter(content__icontains=piece)
    if role:
        rows = rows.filter(role=role)
    return list(rows.order_by("-timestamp", "-seq").values_list("id", flat=True)[:limit])


def _in_memory(
    recent: memory.WorkingHistories, text: str, repository: str, role: str | None, limit: int
) -> list[SearchHit]:
    """Seed 000's fallback: a case-insensitive match in the working histories this
    process holds (see history.memory), newest session first."""
    needle = text.casefold()
    now = datetime.now(UTC)
    hits: list[SearchHit] = []
    for session in recent.sessions(repository):
        for message in reversed(session.history):
            content = message.get("content")
            if not isinstance(content, str) or needle not in content.casefold():
                continue
            if role and message.get("role") != role:
                continue
            hits.append(
                SearchHit(
                    message_id=str(message.get("id") or ""),
                    session_id=session.session_id,
                    session_title=session.title,
                    role=str(message.get("role", "")),
                    timestamp=now,
                    parts=python_snippet(content, text),
                )
            )
            if len(hits) >= limit:
                return hits
    return hits
