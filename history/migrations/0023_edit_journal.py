"""Edits that a killed server cannot leave half-told: a write journal (intent, renames,
end) beside the pending rows, claims that name their process and expire, failures the
model was told of, and why a file needs the person's own Accept. Secrets: the person's
confirmation is its own flag (an active secret is no longer taken as confirmed, so a
secret a model's tool activated is dropped until the person confirms it), and a session
keeps the `.acdcignore` lines its turns started with.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('history', '0022_packed_context_state'),
    ]

    operations = [
        migrations.AddField(
            model_name='pendingedit',
            name='claimed_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='pendingedit',
            name='protected',
            field=models.TextField(blank=True),
        ),
        migrations.AddField(
            model_name='pendingedit',
            name='told',
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name='session',
            name='secret_floor',
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.AddField(
            model_name='sessionobject',
            name='secret_confirmed',
            field=models.BooleanField(default=False),
        ),
        migrations.AlterField(
            model_name='pendingedit',
            name='claim',
            field=models.CharField(blank=True, max_length=96),
        ),
        migrations.AlterField(
            model_name='pendingedit',
            name='status',
            field=models.CharField(choices=[('pending', 'Pending'), ('applied', 'Applied'), ('rejected', 'Rejected'), ('conflict', 'Conflict'), ('undone', 'Undone'), ('failed', 'Failed'), ('retried', 'Retried')], default='pending', max_length=16),
        ),
        migrations.CreateModel(
            name='EditJournal',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('claim', models.CharField(blank=True, db_index=True, max_length=96)),
                ('purpose', models.CharField(choices=[('apply', 'Apply'), ('undo', 'Undo'), ('restore', 'Restore')], max_length=16)),
                ('state', models.CharField(choices=[('open', 'Open'), ('done', 'Done'), ('rolled back', 'Rolled Back'), ('recovered', 'Recovered')], default='open', max_length=16)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('ended_at', models.DateTimeField(blank=True, null=True)),
                ('session', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='journals', to='history.session')),
            ],
            options={
                'ordering': ['id'],
            },
        ),
        migrations.CreateModel(
            name='JournalEntry',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('path', models.CharField(max_length=1024)),
                ('temporary', models.CharField(blank=True, max_length=1024)),
                ('before_sha256', models.CharField(blank=True, max_length=64)),
                ('after_sha256', models.CharField(blank=True, max_length=64)),
                ('renamed', models.BooleanField(default=False)),
                ('journal', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='entries', to='history.editjournal')),
                ('version_before', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='history.objectversion')),
            ],
            options={
                'ordering': ['id'],
            },
        ),
        migrations.AddIndex(
            model_name='editjournal',
            index=models.Index(fields=['state'], name='journal_state'),
        ),
    ]
