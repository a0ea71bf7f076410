from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("history", "0017_message_mentions"),
    ]

    operations = [
        migrations.AddField(
            model_name="session",
            name="instructions",
            field=models.BooleanField(default=True),
        ),
    ]
