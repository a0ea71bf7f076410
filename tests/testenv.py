"""Test-wide set-up (loaded with -p, before pytest-django reads settings): a throwaway repo.

Django settings are read once per test process, before any conftest, so the repository
and data folder are made at import time here. The offline environment (litellm cost map,
tiktoken files) is set for every test. DATABASE_URL and REDIS_URL pass through for the
scale-out run.

Under pytest-xdist (`-n 2`) each worker is its own test process: it makes its own repository
and data folder (so its own SQLite files) even though it inherits the controller's
ACDC_TEST_REPO, and takes its own Redis database (the worker's number added to REDIS_URL's),
so one worker's groups and presence keys never reach the other's consumers. On PostgreSQL
pytest-django already gives each worker its own test database (`test_<name>_gw0`, ...).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from chat.llm.environment import configure_offline_environment

configure_offline_environment()


WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw0", "gw1", ... under xdist


def _make_repository() -> Path:
    root = Path(tempfile.mkdtemp(prefix=f"acdc-test-repo-{WORKER}{'-' if WORKER else ''}"))
    (root / "README.md").write_text("# Sample\n\nA sample repository for acdc's tests.\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def greet(name):\n    return f'hello {name}'\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _redis_of_worker(url: str, worker: str) -> str:
    """`url` with its database number moved on by the worker's number (gw1: /0 -> /1)."""
    parts = urlsplit(url)
    base = int(parts.path.strip("/") or 0)
    number = (base + int(worker.removeprefix("gw"))) % 16  # Redis has 16 by default
    return urlunsplit(parts._replace(path=f"/{number}"))


if WORKER and os.environ.get("REDIS_URL"):
    os.environ["REDIS_URL"] = _redis_of_worker(os.environ["REDIS_URL"], WORKER)
if WORKER or "ACDC_TEST_REPO" not in os.environ:
    os.environ["ACDC_TEST_REPO"] = str(_make_repository())
os.environ["ACDC_REPO"] = os.environ["ACDC_TEST_REPO"]
os.environ["ACDC_DATA_DIR"] = str(Path(os.environ["ACDC_TEST_REPO"]) / ".acdc")
os.environ["ACDC_MODEL"] = "acdc/fake"
os.environ.setdefault("SECRET_KEY", "test-secret-key-not-for-production")
for name in ("ACDC_TOKEN", "ACDC_BIND", "ACDC_RECORD_REQUESTS", "ACDC_API_BASE"):
    os.environ.pop(name, None)
