"""The session's choices about the suggestions for each message: off, removed, pinned."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("history", "0030_message_version_index"),
    ]

    operations = [
        migrations.AddField(
            model_name="session",
            name="suggestions",
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
