"""Versions of a user message (Regenerate, Edit): the first version's id and, for a version
out of view, the ids of its path. Adding the columns rebuilds history_message on SQLite,
which drops the search indexes' triggers: both indexes are built again afterwards."""

from __future__ import annotations

from importlib import import_module

from django.db import migrations, models

# Both search indexes built again, as 0017 does after its own rebuild of the table.
restore_search = import_module("history.migrations.0017_message_mentions").restore_search


class Migration(migrations.Migration):
    dependencies = [
        ("history", "0018_session_project_instructions"),
    ]

    operations = [
        migrations.RunPython(migrations.RunPython.noop, restore_search),  # after a rollback
        migrations.AddField(
            model_name="message",
            name="alt_of",
            field=models.CharField(blank=True, db_index=True, max_length=40),
        ),
        migrations.AddField(
            model_name="message",
            name="branch_path",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.RunPython(restore_search, migrations.RunPython.noop),
    ]
