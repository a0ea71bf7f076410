"""A streaming reply's text as appended parts, so the message row is written once.

Before, every save of a streaming reply (once a second) rewrote the whole message row and
the word and trigram indexes re-indexed the whole text. Now the row keeps empty content
while it streams and `history_streampart` takes what is new; the row gets its text when the
reply ends. Rows left streaming by an older version keep their content, which the parts
then extend. No table is rebuilt here, so the search triggers stay as they are.
"""

from __future__ import annotations

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("history", "0016_pending_edits")]

    operations = [
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
    ]
