"""Search on SQLite: FTS5's word index (migration 0009) and its trigram index (0013, 0021).

Both are external-content tables joined to their message by rowid. Only the newest
CANDIDATES word matches of a query are ranked (bm25): ranking every hit of a common word
costs seconds on a million messages, and in a chat history recent work matters most. FTS5
walks its rowids (insertion order) backwards cheaply and honours a rowid bound. The
trigram table finds the messages holding every trigram of each piece of three or more
characters; their text is checked for the pieces case-insensitively (folded as the
tokenizer folds); shorter pieces filter with LIKE (ASCII case-insensitive, as SQLite's is).
Substring hits come newest first, read backwards until the limit: bm25 over trigrams says
little (every message shares the common ones) and would cost a pass over the window.
"""

from __future__ import annotations

from django.db import connection

from history.search.hits import START, STOP
from history.search.terms import (
    Terms,
    fold,
    fts5_query,
    fts5_substring_query,
    like_pattern,
    trigrams,
    where_filters,
)

CANDIDATES = 2_000
CHECK_BATCH = 50  # substring candidates read per fetch


def _newest_window(table: str) -> str:
    """SQL bounding `f.rowid` to the newest CANDIDATES matches of the MATCH parameter."""
    return f"""f.rowid >= (
        SELECT coalesce(min(r), 0) FROM (
            SELECT rowid AS r FROM {table} WHERE {table} MATCH %s
            ORDER BY rowid DESC LIMIT {int(CANDIDATES)}))"""


def word_rows(terms: Terms, repository: str, role: str | None, limit: int):
    """(message id, snippet) of whole-word hits, best first; None without words to look up."""
    match = fts5_query(terms.text)
    if not match:
        return None
    filters, params = where_filters(repository, role, [])
    sql = f"""
        SELECT m.id, snippet(history_message_fts, 0, %s, %s, '…', 24)
        FROM history_message_fts f
        JOIN history_message m ON m.rowid = f.rowid
        JOIN history_session s ON s.id = m.session_id
        WHERE history_message_fts MATCH %s AND {_newest_window("history_message_fts")}
          {filters}
        ORDER BY bm25(history_message_fts), m.timestamp DESC
        LIMIT %s"""
    with connection.cursor() as cursor:
        cursor.execute(sql, [START, STOP, match, match, *params, limit])
        return cursor.fetchall()


def _holds(folded: str, pieces: list[str]) -> bool:
    return all(piece in folded for piece in pieces)


def substring_ids(
    terms: Terms, repository: str, role: str | None, limit: int, exclude: list[str]
) -> list[str]:
    """Ids of messages holding every piece, newest first, leaving out `exclude`.

    The trigram index keeps no positions (0021), so it names the messages that hold every
    trigram of every piece, in any order; each candidate's text is then checked for the
    pieces themselves, folded as the index folds them, until `limit` are found."""
    match = fts5_substring_query(trigrams(terms.long_pieces))
    filters, params = where_filters(repository, role, exclude)
    for piece in terms.short_pieces:
        filters += " AND m.content LIKE %s ESCAPE '\\'"
        params.append(like_pattern(piece))
    sql = f"""
        SELECT m.id, m.content
        FROM history_message_trigram f
        JOIN history_message m ON m.rowid = f.rowid
        JOIN history_session s ON s.id = m.session_id
        WHERE history_message_trigram MATCH %s {filters}
        ORDER BY f.rowid DESC"""
    pieces = [fold(p) for p in terms.long_pieces]
    found: list[str] = []
    with connection.cursor() as cursor:
        cursor.execute(sql, [match, *params])
        while len(found) < limit and (rows := cursor.fetchmany(CHECK_BATCH)):
            found += [pk for pk, text in rows if _holds(fold(text), pieces)]
    return found[:limit]
