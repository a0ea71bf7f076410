"""Commands the person declares for a repository (kept in acdc's data, never in the work
tree), the model's proposals waiting for the person, and each run with its capped output.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('history', '0023_edit_journal'),
    ]

    operations = [
        migrations.CreateModel(
            name='CommandProposal',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('turn_id', models.CharField(blank=True, max_length=40)),
                ('call_id', models.CharField(blank=True, max_length=255)),
                ('argv', models.JSONField()),
                ('reason', models.TextField(blank=True)),
                ('status', models.CharField(choices=[('pending', 'Pending'), ('approved', 'Approved'), ('denied', 'Denied')], default='pending', max_length=16)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('session', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='proposals', to='history.session')),
            ],
            options={
                'ordering': ['id'],
            },
        ),
        migrations.CreateModel(
            name='CommandRun',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('turn_id', models.CharField(blank=True, max_length=40)),
                ('name', models.CharField(blank=True, max_length=40)),
                ('argv', models.JSONField()),
                ('exit_code', models.IntegerField(blank=True, null=True)),
                ('ending', models.CharField(max_length=16)),
                ('duration_ms', models.PositiveIntegerField(default=0)),
                ('sandboxed', models.BooleanField(default=False)),
                ('output', models.TextField(blank=True)),
                ('output_bytes', models.BigIntegerField(default=0)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('session', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='command_runs', to='history.session')),
            ],
            options={
                'ordering': ['id'],
            },
        ),
        migrations.CreateModel(
            name='DeclaredCommand',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('repository', models.CharField(max_length=1024)),
                ('name', models.CharField(max_length=40)),
                ('argv', models.JSONField()),
                ('timeout_seconds', models.PositiveIntegerField(default=120)),
                ('network', models.BooleanField(default=False)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
            ],
            options={
                'ordering': ['name'],
                'constraints': [models.UniqueConstraint(fields=('repository', 'name'), name='command_repo_name')],
            },
        ),
    ]
