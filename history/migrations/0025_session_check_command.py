"""The session's "Check after applying edits" setting (the name of a declared command),
and the turn whose edits Accept all wrote, its check not yet taken."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('history', '0024_declared_commands'),
    ]

    operations = [
        migrations.AddField(
            model_name='session',
            name='check_command',
            field=models.CharField(blank=True, max_length=40),
        ),
        migrations.AddField(
            model_name='session',
            name='check_due',
            field=models.CharField(blank=True, max_length=40),
        ),
    ]
