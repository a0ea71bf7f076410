"""The index of a message's versions holds only the messages that are one.

Issue 42 item 13: `alt_of` is empty on every message but a question written again
(Regenerate, Edit), yet its full index took an entry, and a 512-byte page write, for each
message a turn stored: one page of each of a one-line turn's two commits. The partial index
`version_of` (where alt_of is set) serves the lookups by a version's root, which say its
condition (`Message.versions_of`). The old index is dropped in place: an AlterField would
make Django rebuild history_message on SQLite, renumbering the rows the search indexes
name (0009).
"""

from __future__ import annotations

from importlib import import_module

from django.db import migrations, models
from django.db.models import Q

_smaller = import_module("history.migrations.0021_smaller_indexes")


def _drop_column_index(apps, schema_editor) -> None:
    model = apps.get_model("history", "message")
    table = model._meta.db_table
    for name in _smaller._column_indexes(schema_editor, table, "alt_of"):
        schema_editor.execute(f"DROP INDEX {schema_editor.quote_name(name)}")


def _create_column_index(apps, schema_editor) -> None:
    model = apps.get_model("history", "message")
    index = models.Index(fields=["alt_of"], name="history_message_alt_of_idx")
    schema_editor.add_index(model, index)


class Migration(migrations.Migration):
    dependencies = [("history", "0029_search_index_on_read")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="message",
                    name="alt_of",
                    field=models.CharField(blank=True, max_length=40),
                ),
            ],
            database_operations=[migrations.RunPython(_drop_column_index, _create_column_index)],
        ),
        migrations.AddIndex(
            model_name="message",
            index=models.Index(condition=~Q(alt_of=""), fields=["alt_of"], name="version_of"),
        ),
    ]
