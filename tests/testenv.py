"""Test-wide set-up (loaded with -p, before pytest-django reads settings): a throwaway repo.

Django settings are read once per test process, before any conftest, so the repository
and data folder are made at import time here. The offline environment (litellm cost map,
tiktoken files) is set for every test. DATABASE_URL and REDIS_URL pass through untouched
for the scale-out run.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from chat.llm.environment import configure_offline_environment

configure_offline_environment()


def _make_repository() -> Path:
    root = Path(tempfile.mkdtemp(prefix="acdc-test-repo-"))
    (root / "README.md").write_text("# Sample\n\nA sample repository for acdc's tests.\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def greet(name):\n    return f'hello {name}'\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


if "ACDC_TEST_REPO" not in os.environ:
    os.environ["ACDC_TEST_REPO"] = str(_make_repository())
os.environ["ACDC_REPO"] = os.environ["ACDC_TEST_REPO"]
os.environ["ACDC_DATA_DIR"] = str(Path(os.environ["ACDC_TEST_REPO"]) / ".acdc")
os.environ["ACDC_MODEL"] = "acdc/fake"
os.environ.setdefault("SECRET_KEY", "test-secret-key-not-for-production")
for name in ("ACDC_TOKEN", "ACDC_BIND", "ACDC_RECORD_REQUESTS", "ACDC_API_BASE"):
    os.environ.pop(name, None)
