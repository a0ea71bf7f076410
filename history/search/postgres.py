"""Search on PostgreSQL: the tsvector column (migration 0004) and pg_trgm's index (0013).

Raw SQL: the tsvector is not a model field, and the ORM's Coalesce would not match it.
User text is never query syntax: words go through plainto_tsquery. Whole-word hits are
ranked by ts_rank over every hit (the GIN index makes that cheap); substring hits (ILIKE)
come newest first by message id, which sorts by creation time (history.ids): walking the
primary key backwards stops at the limit for a common piece, and the trigram GIN index
serves a rare one (ordering by timestamp, which has no index, read every match: 1.6 s for
a piece in 30% of 200,000 messages, against 1 ms by id).
"""

from __future__ import annotations

from django.db import connection

from history.search.hits import GT, LT, START, STOP
from history.search.terms import Terms, like_pattern, where_filters

_HEADLINE = f"StartSel={START}, StopSel={STOP}, MaxWords=30, MinWords=12"
# Fragments give a long message context on both sides of its matches, but drop a short
# one's words before its first match and after its last ("And who calls it?" came out as
# "calls"); a short message is shown whole instead.
_FRAGMENTS = _HEADLINE + ", MaxFragments=2"
_SHORT = 160  # characters: at most about MaxWords words


def word_rows(terms: Terms, repository: str, role: str | None, limit: int):
    """(message id, snippet) of whole-word hits, best first; None without words to look up."""
    query, query_params = "plainto_tsquery('english', %s)", [terms.text]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT numnode({query})", query_params)
        if not cursor.fetchone()[0]:
            return None
        filters, params = where_filters(repository, role, [])
        sql = f"""
            WITH q AS (SELECT {query} AS query),
            top AS (
                SELECT m.id, m.content, m.timestamp, ts_rank(m.search_vector, q.query) AS rank
                FROM history_message m JOIN history_session s ON s.id = m.session_id, q
                WHERE m.search_vector @@ q.query {filters}
                ORDER BY rank DESC, m.timestamp DESC LIMIT %s)
            SELECT top.id, ts_headline('english',
                replace(replace(left(top.content, 100000), '<', %s), '>', %s), q.query,
                CASE WHEN length(top.content) <= %s THEN %s ELSE %s END)
            FROM top, q ORDER BY top.rank DESC, top.timestamp DESC"""
        headline = [LT, GT, _SHORT, _HEADLINE, _FRAGMENTS]
        cursor.execute(sql, [*query_params, *params, limit, *headline])
        return cursor.fetchall()


def substring_ids(
    terms: Terms, repository: str, role: str | None, limit: int, exclude: list[str]
) -> list[str]:
    """Ids of messages holding every piece, newest first, leaving out `exclude`."""
    filters, params = where_filters(repository, role, exclude)
    likes = " AND ".join(["m.content ILIKE %s"] * len(terms.pieces))
    sql = f"""
        SELECT m.id FROM history_message m JOIN history_session s ON s.id = m.session_id
        WHERE {likes} {filters}
        ORDER BY m.id DESC LIMIT %s"""
    with connection.cursor() as cursor:
        cursor.execute(sql, [*map(like_pattern, terms.pieces), *params, limit])
        return [row[0] for row in cursor.fetchall()]
