"""Smaller search and lookup indexes: what a turn writes beyond its text, and what it keeps.

SQLite's trigram table (0013) kept every trigram's position (detail=full), 2.5x the text it
indexed and a third of a 100-turn database. It is rebuilt with detail=none: each trigram
names the messages holding it and nothing else, and its triggers skip empty text (a
streaming reply's row, which gets its text once at the end). Its phrase queries are gone with the
positions, so a substring search asks for every trigram of a piece and then checks the
candidates' text (history.search.sqlite). columnsize=0 drops the per-message token counts,
which only ranking reads, and substring hits are not ranked. The word index keeps its
positions: snippets and bm25 read them.

The session column's own index on messages, usage rows and checkpoints goes too: each of
these tables has an index that starts with the session ((session, seq) for messages,
(session, created_at) for the others), which serves the same lookups and cascades. A turn
wrote two pages fewer for each. Dropped in place (no table rebuild; the search triggers stay).

A later migration that makes Django rebuild history_message on SQLite must build both
search indexes again afterwards with this module's `restore_search` (0017's builds 0013's
trigram layout, which this migration replaces).
"""

from __future__ import annotations

from importlib import import_module

from django.db import migrations, models

_word = import_module("history.migrations.0009_message_search_external")
_trigram = import_module("history.migrations.0013_message_search_trigram")

CREATE_TRIGRAM = """CREATE VIRTUAL TABLE history_message_trigram USING fts5(
    content, content = 'history_message', content_rowid = 'rowid', tokenize = 'trigram',
    detail = none, columnsize = 0)"""
# As 0013's triggers, without the empty text a streaming reply's row starts with: without
# positions or sizes (columnsize=0) an empty message has nothing in the index to keep.
TRIGRAM_TRIGGERS = [
    """CREATE TRIGGER history_message_trigram_insert AFTER INSERT ON history_message
    WHEN new.content != '' BEGIN
        INSERT INTO history_message_trigram(rowid, content) VALUES (new.rowid, new.content);
    END""",
    """CREATE TRIGGER history_message_trigram_update AFTER UPDATE OF content
    ON history_message BEGIN
        INSERT INTO history_message_trigram(history_message_trigram, rowid, content)
        SELECT 'delete', old.rowid, old.content WHERE old.content != '';
        INSERT INTO history_message_trigram(rowid, content)
        SELECT new.rowid, new.content WHERE new.content != '';
    END""",
    """CREATE TRIGGER history_message_trigram_delete AFTER DELETE ON history_message
    WHEN old.content != '' BEGIN
        INSERT INTO history_message_trigram(history_message_trigram, rowid, content)
        VALUES ('delete', old.rowid, old.content);
    END""",
]
TRIGRAM_TABLES = [*_trigram.DROP_INDEX, CREATE_TRIGRAM, *TRIGRAM_TRIGGERS, _trigram.REBUILD]
# (model, field) pairs whose column index another index already covers
SESSION_COLUMNS = [("message", "session"), ("tokenusage", "session"), ("checkpoint", "session")]


def restore_search(apps, schema_editor) -> None:
    """Both SQLite search indexes, dropped and built again from the messages, as they are now."""
    if schema_editor.connection.vendor != "sqlite":
        return
    _word.restore_sqlite_search(apps, schema_editor)
    for statement in TRIGRAM_TABLES:
        schema_editor.execute(statement)


def _column_indexes(schema_editor, table: str, column: str) -> list[str]:
    """Names of the plain (not unique, not key) one-column indexes on table.column."""
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    return [
        name
        for name, info in constraints.items()
        if info["index"]
        and info["columns"] == [column]
        and not (info["unique"] or info["primary_key"] or info["foreign_key"])
    ]


def _drop_session_indexes(apps, schema_editor) -> None:
    for model_name, field_name in SESSION_COLUMNS:
        model = apps.get_model("history", model_name)
        column = model._meta.get_field(field_name).column
        for name in _column_indexes(schema_editor, model._meta.db_table, column):
            schema_editor.execute(f"DROP INDEX {schema_editor.quote_name(name)}")


def _create_session_indexes(apps, schema_editor) -> None:
    for model_name, field_name in SESSION_COLUMNS:
        model = apps.get_model("history", model_name)
        field = model._meta.get_field(field_name)
        table = model._meta.db_table
        if not _column_indexes(schema_editor, table, field.column):
            index = models.Index(fields=[field.name], name=f"{table}_{field.column}_idx")
            schema_editor.add_index(model, index)


def _trigram_forward(apps, schema_editor) -> None:
    if schema_editor.connection.vendor == "sqlite":
        for statement in TRIGRAM_TABLES:
            schema_editor.execute(statement)


def _trigram_backward(apps, schema_editor) -> None:
    _trigram.restore_sqlite_trigram(apps, schema_editor)


def _session_fk(to: str, related_name: str) -> models.ForeignKey:
    return models.ForeignKey(
        db_index=False,
        on_delete=models.deletion.CASCADE,
        related_name=related_name,
        to=to,
    )


class Migration(migrations.Migration):
    dependencies = [("history", "0020_stream_parts")]

    operations = [
        migrations.RunPython(_trigram_forward, _trigram_backward),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="message",
                    name="session",
                    field=_session_fk("history.session", "messages"),
                ),
                migrations.AlterField(
                    model_name="tokenusage",
                    name="session",
                    field=_session_fk("history.session", "token_usage"),
                ),
                migrations.AlterField(
                    model_name="checkpoint",
                    name="session",
                    field=_session_fk("history.session", "checkpoints"),
                ),
            ],
            database_operations=[
                migrations.RunPython(_drop_session_indexes, _create_session_indexes)
            ],
        ),
    ]
