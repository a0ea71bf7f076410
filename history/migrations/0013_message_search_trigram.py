"""A substring index beside the word index, so search finds "keniz" in "Tokenization".

SQLite: a second external-content FTS5 table over history_message with the trigram
tokenizer (detail=full: trigram phrase matching needs positions), kept current by its own
triggers and filled from the messages already stored. Like 0009's word index it must be
rebuilt by any later migration that rebuilds history_message (`restore_sqlite_trigram`).
PostgreSQL: pg_trgm's GIN index on content, which serves ILIKE '%term%'. The extension is
created here; a server that does not offer it (or a role that may not create it) stops the
migration with a message that says what to do, instead of a traceback from the driver.
"""

from __future__ import annotations

from django.core.management.base import CommandError
from django.db import DatabaseError, migrations

DROP_INDEX = [
    "DROP TRIGGER IF EXISTS history_message_trigram_insert",
    "DROP TRIGGER IF EXISTS history_message_trigram_update",
    "DROP TRIGGER IF EXISTS history_message_trigram_delete",
    "DROP TABLE IF EXISTS history_message_trigram",
]
CREATE_TABLE = """CREATE VIRTUAL TABLE history_message_trigram USING fts5(
    content, content = 'history_message', content_rowid = 'rowid', tokenize = 'trigram')"""
CREATE_TRIGGERS = [
    """CREATE TRIGGER history_message_trigram_insert AFTER INSERT ON history_message BEGIN
        INSERT INTO history_message_trigram(rowid, content) VALUES (new.rowid, new.content);
    END""",
    """CREATE TRIGGER history_message_trigram_update AFTER UPDATE OF content
    ON history_message BEGIN
        INSERT INTO history_message_trigram(history_message_trigram, rowid, content)
        VALUES ('delete', old.rowid, old.content);
        INSERT INTO history_message_trigram(rowid, content) VALUES (new.rowid, new.content);
    END""",
    """CREATE TRIGGER history_message_trigram_delete AFTER DELETE ON history_message BEGIN
        INSERT INTO history_message_trigram(history_message_trigram, rowid, content)
        VALUES ('delete', old.rowid, old.content);
    END""",
]
REBUILD = "INSERT INTO history_message_trigram(history_message_trigram) VALUES ('rebuild')"

PG_EXTENSION_MISSING = (
    "PostgreSQL's pg_trgm extension is needed for substring search but this server does "
    "not offer it: install the server's contrib package (e.g. postgresql-contrib), or have "
    "a superuser run CREATE EXTENSION pg_trgm in this database, then start acdc again ({})"
)
PG_INDEX = (
    "CREATE INDEX IF NOT EXISTS history_message_trigram "
    "ON history_message USING GIN (content gin_trgm_ops)"
)


def restore_sqlite_trigram(apps, schema_editor) -> None:
    """Drop whatever substring index exists and build it afresh from the messages."""
    if schema_editor.connection.vendor != "sqlite":
        return
    for statement in [*DROP_INDEX, CREATE_TABLE, *CREATE_TRIGGERS, REBUILD]:
        schema_editor.execute(statement)


def ensure_pg_trigram(schema_editor) -> None:
    """pg_trgm and the index, or a CommandError saying why not (acdc prints it in a line)."""
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'")
        if cursor.fetchone() is None:
            cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'")
            if cursor.fetchone() is None:
                raise CommandError(PG_EXTENSION_MISSING.format("not installed on the server"))
            try:
                cursor.execute("SAVEPOINT acdc_trgm")
                cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
                cursor.execute("RELEASE SAVEPOINT acdc_trgm")
            except DatabaseError as exc:
                cursor.execute("ROLLBACK TO SAVEPOINT acdc_trgm")
                reason = str(exc).strip().splitlines()[0]
                raise CommandError(PG_EXTENSION_MISSING.format(reason)) from None
        cursor.execute(PG_INDEX)


def _forward(apps, schema_editor) -> None:
    vendor = schema_editor.connection.vendor
    if vendor == "sqlite":
        restore_sqlite_trigram(apps, schema_editor)
    elif vendor == "postgresql":
        ensure_pg_trigram(schema_editor)


def _backward(apps, schema_editor) -> None:
    vendor = schema_editor.connection.vendor
    if vendor == "sqlite":
        for statement in DROP_INDEX:
            schema_editor.execute(statement)
    elif vendor == "postgresql":  # the extension stays: other databases' objects may use it
        schema_editor.execute("DROP INDEX IF EXISTS history_message_trigram")


class Migration(migrations.Migration):
    dependencies = [("history", "0012_imported_session_times")]

    operations = [migrations.RunPython(_forward, _backward)]
