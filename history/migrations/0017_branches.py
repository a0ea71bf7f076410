from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("history", "0016_pending_edits"),
    ]

    operations = [
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
    ]
