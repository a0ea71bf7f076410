"""Full-text search over message content, built per database backend.

SQLite: an FTS5 table holding a copy of each message's content (rowid = the message's
rowid, message_id kept for the join), kept in sync by triggers on history_message.
PostgreSQL: a stored generated tsvector column with a GIN index, over the first 100,000
characters (a tsvector is capped at 1 MB, and a huge paste must never fail its insert).
Other backends get nothing and search falls back to substring matching. RunPython picks
by vendor, since RunSQL has no vendor condition of its own.
"""

from __future__ import annotations

from django.db import migrations

SQLITE_FORWARD = [
    """CREATE VIRTUAL TABLE history_message_fts USING fts5(
        content, message_id UNINDEXED, tokenize = 'unicode61 remove_diacritics 2')""",
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
    """INSERT INTO history_message_fts(rowid, content, message_id)
        SELECT rowid, content, id FROM history_message""",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS history_message_fts_insert",
    "DROP TRIGGER IF EXISTS history_message_fts_update",
    "DROP TRIGGER IF EXISTS history_message_fts_delete",
    "DROP TABLE IF EXISTS history_message_fts",
]
POSTGRES_FORWARD = [
    """ALTER TABLE history_message ADD COLUMN search_vector tsvector
        GENERATED ALWAYS AS (to_tsvector('english'::regconfig, left(content, 100000))) STORED""",
    "CREATE INDEX history_message_search ON history_message USING GIN (search_vector)",
]
POSTGRES_BACKWARD = [
    "DROP INDEX IF EXISTS history_message_search",
    "ALTER TABLE history_message DROP COLUMN IF EXISTS search_vector",
]


def _run(statements_by_vendor: dict[str, list[str]]):
    def run(apps, schema_editor) -> None:
        for statement in statements_by_vendor.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("history", "0003_image")]

    operations = [
        migrations.RunPython(
            _run({"sqlite": SQLITE_FORWARD, "postgresql": POSTGRES_FORWARD}),
            _run({"sqlite": SQLITE_BACKWARD, "postgresql": POSTGRES_BACKWARD}),
        ),
    ]
