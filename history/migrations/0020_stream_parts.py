"""A streaming reply's text as appended parts, so the message row is written once.

Before, every save of a streaming reply (once a second) rewrote the whole message row and
the word and trigram indexes re-indexed the whole text. Now the row keeps empty content
while it streams and `history_streampart` takes what is new; the row gets its text when the
reply ends. Rows left streaming by an older version keep their content, which the parts
then extend. No table is rebuilt here, so the search triggers stay as they are.

On SQLite the table is WITHOUT ROWID: its rows live in the primary key's own b-tree, so an
append dirties one page (a rowid table would also write its key's index). A later migration
that makes Django rebuild this table on SQLite turns it into an ordinary one, which works
the same, only with a page more per save.
"""

from __future__ import annotations

import django.db.models.deletion
from django.db import migrations, models

SQLITE_TABLE = """CREATE TABLE "history_streampart" (
    "message_id" varchar(40) NOT NULL
        REFERENCES "history_message" ("id") DEFERRABLE INITIALLY DEFERRED,
    "offset" integer unsigned NOT NULL CHECK ("offset" >= 0),
    "text" text NOT NULL,
    PRIMARY KEY ("message_id", "offset")
) WITHOUT ROWID"""


def _create(apps, schema_editor) -> None:
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute(SQLITE_TABLE)
    else:
        schema_editor.create_model(apps.get_model("history", "StreamPart"))


def _drop(apps, schema_editor) -> None:
    schema_editor.delete_model(apps.get_model("history", "StreamPart"))


class Migration(migrations.Migration):
    dependencies = [("history", "0019_branches")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="StreamPart",
                    fields=[
                        (
                            "pk",
                            models.CompositePrimaryKey(
                                "message",
                                "offset",
                                blank=True,
                                editable=False,
                                primary_key=True,
                                serialize=False,
                            ),
                        ),
                        ("offset", models.PositiveIntegerField()),
                        ("text", models.TextField()),
                        (
                            "message",
                            models.ForeignKey(
                                db_index=False,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="stream_parts",
                                to="history.message",
                            ),
                        ),
                    ],
                ),
            ],
        ),
        # After the state's CreateModel, so the model is there for the other backends.
        migrations.RunPython(_create, _drop),
    ]
