"""A user message's @-mentions, stored with it (`Message.mentions`).

On SQLite, adding a column with a default rebuilds history_message, and its search triggers
go with the old table: both search indexes are built again afterwards (as 0009 and 0013
ask of any migration that rebuilds the table), and again after the column is removed.
A migration after 0021 calls 0021's `restore_search` instead: this one builds 0013's
trigram layout, which 0021 replaced.
"""

from importlib import import_module

from django.db import migrations, models

_word = import_module("history.migrations.0009_message_search_external")
_substring = import_module("history.migrations.0013_message_search_trigram")


def restore_search(apps, schema_editor) -> None:
    _word.restore_sqlite_search(apps, schema_editor)
    _substring.restore_sqlite_trigram(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("history", "0016_pending_edits"),
    ]

    operations = [
        migrations.RunPython(migrations.RunPython.noop, restore_search),
        migrations.AddField(
            model_name="message",
            name="mentions",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.RunPython(restore_search, migrations.RunPython.noop),
    ]
