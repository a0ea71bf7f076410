from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("history", "0016_pending_edits"),
    ]

    operations = [
        migrations.AddField(
            model_name="message",
            name="mentions",
            field=models.JSONField(blank=True, default=list),
        ),
    ]
