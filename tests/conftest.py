"""Fixtures shared by every test folder: a throwaway repository folder, `root`.

`root` is `tmp_path / "repo"` holding the files of `repo_files` (a path ending in "/" is an
empty folder), made a git repository when `repo_is_git` is true. A module that needs other
files overrides `repo_files` (and `repo_is_git`) with its own, so the making lives here once.
tests/chat/conftest.py wraps `root` as the chat's `Repository` (`repo`).

`served` is what the process serves (`chat.live.served.Served`), built afresh for the test
and put where the app keeps it, so the consumer and the views the test reaches use the same
one the test holds (its turn host, counts, maps); its background passes end with the test.
Every chat test has its own (tests/chat/conftest.py); no test patches a part on a module.

Every Django test client carries the access cookie (`acdc.access`), as a browser does once it
opened the address `acdc serve` printed; a test of the refusal takes it off
(`client.cookies.clear()`). The chat websocket's test client adds it too (tests/chat/sockets.py).
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connections
from django.test import client as test_client

from acdc.access import cookie_name

# Tests open and close event loops, and with them the threads channels runs database calls
# in; a connection kept per thread would outlive its thread and crowd PostgreSQL. So tests
# do not keep connections, nor do the servers they start on PostgreSQL; a server they start
# on SQLite keeps its connections as a person's does.
if os.environ.get("DATABASE_URL"):
    os.environ["ACDC_DB_CONN_MAX_AGE"] = "0"
for _alias in connections:
    connections.settings[_alias]["CONN_MAX_AGE"] = 0


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """pytest-django's, and before it drops the PostgreSQL test database, an end to the
    other sessions on it, which make the drop fail ("being accessed by other users"): the
    connections channels' database threads in this process still hold (Django closes only
    the calling thread's), and the backend of an acdc process a test killed, which lingers
    a moment. The stopped processes are given ten seconds to go by themselves first."""
    yield
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    others = (
        " FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
    )
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        for _ in range(100):
            cursor.execute("SELECT count(*)" + others)
            if cursor.fetchone()[0] == 0:
                return
            time.sleep(0.1)  # a poll of the server's own list, not a wait for a guess
        cursor.execute("SELECT pg_terminate_backend(pid)" + others)


@pytest.fixture(autouse=True)
def authorized_clients(monkeypatch: pytest.MonkeyPatch) -> None:
    """Django's Client and AsyncClient, made with the access cookie for their own host."""
    for kind in (test_client.Client, test_client.AsyncClient):
        monkeypatch.setattr(kind, "__init__", _with_access_cookie(kind.__init__))


def _with_access_cookie(init):
    def made(self, *args, **kwargs) -> None:
        init(self, *args, **kwargs)
        self.cookies[cookie_name(self.defaults.get("HTTP_HOST", ""))] = settings.ACDC_TOKEN

    return made


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch):
    """A served object of the test's own, installed in the app registry for its length."""
    from tests.serving import install

    fresh = install(monkeypatch)
    yield fresh
    fresh.passes.wait()  # a page's counting thread must not outlive the test's database


@pytest.fixture
def repo_files() -> dict[str, str | bytes]:
    return {"README.md": "# Readme\n", "src/app.py": "print('hi')\n"}


@pytest.fixture
def repo_is_git() -> bool:
    return False


@pytest.fixture
def root(tmp_path: Path, repo_files: dict[str, str | bytes], repo_is_git: bool) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    for name, content in repo_files.items():
        path = folder / name
        if name.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    if repo_is_git:
        subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


def pytest_terminal_summary(terminalreporter) -> None:
    """The layout's figures (tests/test_layers.py), printed for a reviewer to read."""
    for report in terminalreporter.stats.get("passed", []):
        for name, value in getattr(report, "user_properties", ()):
            if name == "layout figures":
                terminalreporter.write_sep("-", "layout figures")
                terminalreporter.write_line(value)
