"""The context header of sessions and checkpoints stored deflated (history.models.fields).

A turn wrote the session's ~4 KB header twice (the lease's UPDATE rewrites the whole row,
overflow pages and all) and each checkpoint kept a copy: deflated they take about 40%. On
PostgreSQL the jsonb column becomes bytea holding the JSON text (a plain cast from jsonb to
bytea does not exist); on SQLite Django rebuilds the two tables (no search trigger is on
them). Then every stored header is written again, deflated. Going back writes JSON text
first, then gives the columns their JSON type again.
"""

from __future__ import annotations

from django.db import migrations, models

from history.models.fields import PackedJSONField, pack, unpack

TABLES = {"session": "history_session", "checkpoint": "history_checkpoint"}


def _fields(model) -> tuple[models.Field, models.Field]:
    """(the JSON field, the packed one) of `model`'s context_state."""
    json_field = models.JSONField(default=dict, blank=True)
    packed = PackedJSONField(default=dict, blank=True)
    for field in (json_field, packed):
        field.set_attributes_from_name("context_state")
        field.model = model
    return json_field, packed


def _rewrite(schema_editor, table: str, encode) -> None:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"SELECT id, context_state FROM {table}")
        for pk, raw in cursor.fetchall():
            if raw is not None:
                value = unpack(raw) if not isinstance(raw, dict) else raw
                cursor.execute(
                    f"UPDATE {table} SET context_state = %s WHERE id = %s", [encode(value), pk]
                )


def _pack_columns(apps, schema_editor) -> None:
    postgres = schema_editor.connection.vendor == "postgresql"
    for name, table in TABLES.items():
        if postgres:
            schema_editor.execute(
                f"ALTER TABLE {table} ALTER COLUMN context_state TYPE bytea "
                "USING convert_to(context_state::text, 'UTF8')"
            )
        else:
            model = apps.get_model("history", name)
            schema_editor.alter_field(model, *_fields(model))
        _rewrite(schema_editor, table, pack)


def _json_columns(apps, schema_editor) -> None:
    postgres = schema_editor.connection.vendor == "postgresql"
    for name, table in TABLES.items():
        if postgres:
            _rewrite(schema_editor, table, lambda value: PackedJSONField.json_bytes(value))
            schema_editor.execute(
                f"ALTER TABLE {table} ALTER COLUMN context_state TYPE jsonb "
                "USING convert_from(context_state, 'UTF8')::jsonb"
            )
        else:
            _rewrite(schema_editor, table, lambda value: PackedJSONField.json_bytes(value).decode())
            model = apps.get_model("history", name)
            json_field, packed = _fields(model)
            schema_editor.alter_field(model, packed, json_field)


class Migration(migrations.Migration):
    dependencies = [("history", "0021_smaller_indexes")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name=name,
                    name="context_state",
                    field=PackedJSONField(blank=True, default=dict),
                )
                for name in TABLES
            ],
            database_operations=[migrations.RunPython(_pack_columns, _json_columns)],
        ),
    ]
