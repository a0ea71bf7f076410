from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("history", "0016_pending_edits"),
    ]

    operations = [
        migrations.AddField(
            model_name="session",
            name="instructions",
            field=models.BooleanField(default=True),
        ),
    ]
