"""SQLite search reads message text from history_message instead of keeping its own copy.

0004's FTS5 table stored every message's content a second time. This one is an
external-content FTS5 table over history_message (content_rowid = its implicit rowid):
it holds only the index, and snippet()/highlight() read the text from the message row.
The join back to a message is by rowid; the triggers feed FTS5 the old text through its
'delete' command, and the update trigger fires only when content changes.

Why the implicit rowid is safe enough: VACUUM may renumber the rowids of a table without
an INTEGER PRIMARY KEY, but SQLite copies them verbatim for a table that has an index,
and history_message always has one (its primary key); acdc never runs VACUUM anyway.
An explicit integer column would need a model field and a table rebuild for no gain.
What does break the index is Django rebuilding history_message on SQLite (most AddField
and AlterField operations): that drops these triggers and renumbers the rows. A migration
that does so must recreate the triggers and rebuild, as `restore_sqlite_search` does.
PostgreSQL keeps 0004's generated tsvector column: lexemes and positions, not the text.
"""

from __future__ import annotations

from django.db import migrations

DROP_INDEX = [
    "DROP TRIGGER IF EXISTS history_message_fts_insert",
    "DROP TRIGGER IF EXISTS history_message_fts_update",
    "DROP TRIGGER IF EXISTS history_message_fts_delete",
    "DROP TABLE IF EXISTS history_message_fts",
]
CREATE_TABLE = """CREATE VIRTUAL TABLE history_message_fts USING fts5(
    content, content = 'history_message', content_rowid = 'rowid',
    tokenize = 'unicode61 remove_diacritics 2')"""
CREATE_TRIGGERS = [
    """CREATE TRIGGER history_message_fts_insert AFTER INSERT ON history_message BEGIN
        INSERT INTO history_message_fts(rowid, content) VALUES (new.rowid, new.content);
    END""",
    """CREATE TRIGGER history_message_fts_update AFTER UPDATE OF content ON history_message
    BEGIN
        INSERT INTO history_message_fts(history_message_fts, rowid, content)
        VALUES ('delete', old.rowid, old.content);
        INSERT INTO history_message_fts(rowid, content) VALUES (new.rowid, new.content);
    END""",
    """CREATE TRIGGER history_message_fts_delete AFTER DELETE ON history_message BEGIN
        INSERT INTO history_message_fts(history_message_fts, rowid, content)
        VALUES ('delete', old.rowid, old.content);
    END""",
]
REBUILD = "INSERT INTO history_message_fts(history_message_fts) VALUES ('rebuild')"

# 0004's layout, for going back: a table with its own copy of content and the message id.
COPY_TABLE = """CREATE VIRTUAL TABLE history_message_fts USING fts5(
    content, message_id UNINDEXED, tokenize = 'unicode61 remove_diacritics 2')"""
COPY_TRIGGERS = [
    """CREATE TRIGGER history_message_fts_insert AFTER INSERT ON history_message BEGIN
        INSERT INTO history_message_fts(rowid, content, message_id)
        VALUES (new.rowid, new.content, new.id);
    END""",
    """CREATE TRIGGER history_message_fts_update AFTER UPDATE OF content ON history_message
    BEGIN
        DELETE FROM history_message_fts WHERE rowid = old.rowid;
        INSERT INTO history_message_fts(rowid, content, message_id)
        VALUES (new.rowid, new.content, new.id);
    END""",
    """CREATE TRIGGER history_message_fts_delete AFTER DELETE ON history_message BEGIN
        DELETE FROM history_message_fts WHERE rowid = old.rowid;
    END""",
]
COPY_FILL = """INSERT INTO history_message_fts(rowid, content, message_id)
    SELECT rowid, content, id FROM history_message"""


def restore_sqlite_search(apps, schema_editor) -> None:
    """Drop whatever search index exists and build the external-content one afresh."""
    if schema_editor.connection.vendor != "sqlite":
        return
    for statement in [*DROP_INDEX, CREATE_TABLE, *CREATE_TRIGGERS, REBUILD]:
        schema_editor.execute(statement)


def _restore_copy(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "sqlite":
        return
    for statement in [*DROP_INDEX, COPY_TABLE, *COPY_TRIGGERS, COPY_FILL]:
        schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("history", "0008_message_role_tool")]

    operations = [migrations.RunPython(restore_sqlite_search, _restore_copy)]
