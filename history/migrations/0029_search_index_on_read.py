"""SQLite's search indexes take new messages when they are read, not when a turn writes them.

Issue 42 item 13: each message stored by a turn added a segment to both FTS5 indexes in the
turn's own commit (the word index's data, idx and docsize pages, the trigram index's data
and idx pages: 16 of a one-line turn's 42 write-ahead log pages, in its two commits).
Now no trigger indexes an INSERT. `history.search.pending.catch_up` indexes every message
not yet indexed, in one transaction, before a search or a grounding lookup reads an index
and once at start-up, so a search finds what it found before, and many turns' messages
share one segment.

Which messages are indexed: those whose rowid is at most the word index's highest docsize
id (FTS5 keeps a docsize row for every message it indexed, empty text included), the
"mark". Rows above it are not in either index. SQLite gives a new row the highest rowid + 1,
so a new message is always above the mark, also after the newest row was deleted (its
docsize row goes with it and the mark falls to the next indexed row). An UPDATE of the
text and a DELETE still keep both indexes exact at once, but only for rows at or below the
mark (a row above it has nothing in the index to remove): one trigger each, which checks
the mark once before it touches either index.

A later migration that makes Django rebuild history_message on SQLite must build both
indexes again with this module's `restore_search` (not 0021's, whose insert triggers
would index a message twice once `catch_up` runs).
"""

from __future__ import annotations

from importlib import import_module

from django.db import migrations

_word = import_module("history.migrations.0009_message_search_external")
_smaller = import_module("history.migrations.0021_smaller_indexes")

MARK = "(SELECT coalesce(max(id), 0) FROM history_message_fts_docsize)"
DROP_TRIGGERS = [
    f"DROP TRIGGER IF EXISTS history_message_{index}_{event}"
    for index in ("fts", "trigram", "search")
    for event in ("insert", "update", "delete")
]
ON_READ_TRIGGERS = [
    f"""CREATE TRIGGER history_message_search_update AFTER UPDATE OF content
    ON history_message WHEN old.rowid <= {MARK} BEGIN
        INSERT INTO history_message_fts(history_message_fts, rowid, content)
        VALUES ('delete', old.rowid, old.content);
        INSERT INTO history_message_fts(rowid, content) VALUES (new.rowid, new.content);
        INSERT INTO history_message_trigram(history_message_trigram, rowid, content)
        SELECT 'delete', old.rowid, old.content WHERE old.content != '';
        INSERT INTO history_message_trigram(rowid, content)
        SELECT new.rowid, new.content WHERE new.content != '';
    END""",
    f"""CREATE TRIGGER history_message_search_delete AFTER DELETE
    ON history_message WHEN old.rowid <= {MARK} BEGIN
        INSERT INTO history_message_fts(history_message_fts, rowid, content)
        VALUES ('delete', old.rowid, old.content);
        INSERT INTO history_message_trigram(history_message_trigram, rowid, content)
        SELECT 'delete', old.rowid, old.content WHERE old.content != '';
    END""",
]
# What `catch_up` runs, with the mark as its parameter (also at the way back, below).
INDEX_NEW = [
    """INSERT INTO history_message_fts(rowid, content)
    SELECT rowid, content FROM history_message WHERE rowid > %s ORDER BY rowid""",
    """INSERT INTO history_message_trigram(rowid, content)
    SELECT rowid, content FROM history_message WHERE rowid > %s AND content != ''
    ORDER BY rowid""",
]


def restore_search(apps, schema_editor) -> None:
    """Both indexes built afresh from every message, kept by the on-read triggers."""
    if schema_editor.connection.vendor != "sqlite":
        return
    _smaller.restore_search(apps, schema_editor)
    _on_read(apps, schema_editor)


def _on_read(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "sqlite":
        return
    for statement in [*DROP_TRIGGERS, *ON_READ_TRIGGERS]:
        schema_editor.execute(statement)


def _on_write(apps, schema_editor) -> None:
    """Back to 0021's triggers, the messages not yet indexed indexed first."""
    if schema_editor.connection.vendor != "sqlite":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(MARK.strip("()"))
        mark = cursor.fetchone()[0]
        for statement in INDEX_NEW:
            cursor.execute(statement, [mark])
    for statement in [*DROP_TRIGGERS, *_word.CREATE_TRIGGERS, *_smaller.TRIGRAM_TRIGGERS]:
        schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("history", "0028_tool_approval")]

    operations = [migrations.RunPython(_on_read, _on_write)]
