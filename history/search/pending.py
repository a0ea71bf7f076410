"""SQLite's search indexes brought up to date when they are read (migration 0029).

A turn stores its messages without indexing them: `catch_up` indexes every message above
the mark (the word index's highest docsize id) in one transaction, so many turns' messages
share one FTS5 segment instead of adding two segments a message. Search and grounding call
it before they read an index, and the server once at start-up. PostgreSQL's indexes are
kept by the database on every write: nothing to do there.
"""

from __future__ import annotations

from importlib import import_module

from django.db import DatabaseError, connection, transaction

_on_read = import_module("history.migrations.0029_search_index_on_read")
_MARK = _on_read.MARK.strip("()")
_PENDING = "SELECT 1 FROM history_message WHERE rowid > %s LIMIT 1"


def catch_up() -> int:
    """Index the messages not yet indexed; returns how many (0 on PostgreSQL)."""
    if connection.vendor != "sqlite" or not _pending():
        return 0
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_MARK)  # again, inside the write lock: another may have caught up
        mark = cursor.fetchone()[0]
        word, trigram = _on_read.INDEX_NEW
        cursor.execute(word, [mark])
        indexed = cursor.rowcount
        cursor.execute(trigram, [mark])
    return max(indexed, 0)


def caught_up() -> bool:
    """`catch_up`, False when it failed (a lock held too long, a damaged index): the
    caller then reads the messages without the index."""
    try:
        catch_up()
    except DatabaseError:
        return False
    return True


def _pending() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(_MARK)
        cursor.execute(_PENDING, [cursor.fetchone()[0]])
        return cursor.fetchone() is not None
