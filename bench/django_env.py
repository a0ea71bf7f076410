"""Django for the benchmarks that need it, on a repository and database they own.

`setup_django` points acdc's settings at the benchmark's folder and a fresh SQLite
database, whatever ACDC_REPO or DATABASE_URL say, unless this process already has
settings (under pytest the test settings stay and the replay overrides ACDC_REPO).
Importing this module loads Django but no app: a module that imports models is imported
only after `setup_django`. Non-goal: the server's own start-up (`acdc.cli`).
"""

from __future__ import annotations

import os
from pathlib import Path

import django
from django.conf import settings
from django.core.management import call_command
from django.db import connections

_IGNORED = ("DATABASE_URL", "REDIS_URL", "ACDC_RECORD_REQUESTS", "ACDC_TIER_SCHEME")


def setup_django(repo: Path, data_dir: Path) -> None:
    """Django on `repo` with a migrated SQLite database in `data_dir`."""
    if not settings.configured:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "acdc.settings")
        os.environ["ACDC_REPO"], os.environ["ACDC_DATA_DIR"] = str(repo), str(data_dir)
        for name in _IGNORED:
            os.environ.pop(name, None)
    django.setup()
    call_command("migrate", verbosity=0, interactive=False)


def close_database() -> None:
    connections.close_all()
