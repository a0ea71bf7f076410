"""The write journal: a full disk or any OS error leaves every file as it was, and a server
killed between two renames is finished on its next start, so the rows and the disk agree."""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from chat.repo.edits import disk, journal
from chat.repo.edits.applying import accept
from chat.repo.edits.proposing import propose
from contextcore.edits import EditOp
from history import services
from history.models import EditJournal, PendingEdit
from tests import serving
from tests.test_serve_startup import _environ

A, B = "A = 1\n", "B = 1\n"
TWO = [EditOp("a.py", "replace", "A = 1", "A = 2"), EditOp("b.py", "replace", "B = 1", "B = 2")]
WAIT = 120.0  # s, for a subprocess on a busy machine


@pytest.fixture
def repo_files():
    return {"a.py": A, "b.py": B}


@pytest.fixture
def edits_on(settings, served_root):
    settings.ACDC_EDITS = True
    return served_root


def _temporaries(root: Path) -> list[str]:
    return [p.name for p in root.rglob(f"*{disk.TEMP_SUFFIX}")]


@pytest.mark.django_db
def test_a_full_disk_leaves_every_file_as_it_was_and_says_so_in_one_line(edits_on):
    session = services.session_create(repository="", model="acdc/fake")
    repo = serving.repository()
    propose(session, TWO, repo=repo, turn_id="t1")
    writes = []

    def full_disk(handle, data: bytes) -> None:  # the second file meets a full disk
        writes.append(data)
        if len(writes) == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        handle.write(data)

    ids = list(PendingEdit.objects.values_list("pk", flat=True))
    original = journal.write_set
    journal.write_set = lambda *a, **k: original(*a, **k, writer=full_disk)
    try:
        outcome = accept(session, ids, repo=repo)
    finally:
        journal.write_set = original
    assert (edits_on / "a.py").read_text() == A and (edits_on / "b.py").read_text() == B
    assert _temporaries(edits_on) == []
    assert outcome.notice.startswith("Nothing was written: No space left on device")
    assert "\n" not in outcome.notice
    assert set(PendingEdit.objects.values_list("status", "claim")) == {("pending", "")}
    assert EditJournal.objects.get().state == EditJournal.State.ROLLED_BACK
    assert accept(session, ids, repo=repo).applied  # space again: it applies whole


@pytest.mark.django_db
def test_a_rename_that_fails_puts_the_renamed_files_back(edits_on, monkeypatch):
    session = services.session_create(repository="", model="acdc/fake")
    repo = serving.repository()
    propose(session, TWO, repo=repo, turn_id="t1")
    renames = []
    real = disk.rename_into

    def refusing(temporary, full, sha256, own):
        renames.append(full)
        if len(renames) == 2:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real(temporary, full, sha256, own)

    monkeypatch.setattr(disk, "rename_into", refusing)
    outcome = accept(session, list(PendingEdit.objects.values_list("pk", flat=True)), repo=repo)
    assert "Nothing was written: Input/output error while replacing b.py" in outcome.notice
    assert (edits_on / "a.py").read_text() == A and (edits_on / "b.py").read_text() == B
    assert _temporaries(edits_on) == []


def _git_repo(root: Path) -> Path:
    root.mkdir()
    (root / "a.py").write_text(A)
    (root / "b.py").write_text(B)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


KILLED_APPLY = """
import os, django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from chat.repo import sessionsets
from chat.repo.edits.applying import accept
from chat.repo.edits.proposing import propose
from contextcore.edits import EditOp
from history import services
from history.models import PendingEdit
from django.apps import apps
session = services.session_create(repository="", model="acdc/fake")
repo = apps.get_app_config("chat").served.repository.indexed()
ops = [EditOp("a.py", "replace", "A = 1", "A = 2"), EditOp("b.py", "replace", "B = 1", "B = 2")]
propose(session, ops, repo=repo, turn_id="t1")
os.environ["ACDC_TEST_KILL_AFTER_RENAMES"] = "1"
accept(session, list(PendingEdit.objects.values_list("pk", flat=True)), repo=repo)
print("not killed")
"""


def _rows(data: Path) -> dict:
    with sqlite3.connect(data / "acdc.sqlite3") as db:
        rows = db.execute("SELECT path, status, claim, version_after_id FROM history_pendingedit")
        found = {path: (status, claim, after) for path, status, claim, after in rows}
        journals = [state for (state,) in db.execute("SELECT state FROM history_editjournal")]
    return {"rows": found, "journals": journals}


def test_a_server_killed_between_two_renames_is_finished_on_its_next_start(tmp_path):
    repo, data = _git_repo(tmp_path / "repo"), tmp_path / "data"
    environ = _environ(repo, data) | {"DJANGO_SETTINGS_MODULE": "acdc.settings"}
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_APPLY], env=environ, capture_output=True, timeout=WAIT
    )
    assert killed.returncode == -9, killed.stderr.decode()[-2000:]
    assert (repo / "a.py").read_text() == "A = 2\n" and (repo / "b.py").read_text() == B
    before = _rows(data)
    assert {status for status, claim, _ in before["rows"].values()} == {"pending"}
    assert all(claim for _, claim, _ in before["rows"].values())  # claimed by the dead
    assert before["journals"] == ["open"]

    restart = [sys.executable, "-m", "acdc", "serve", "--port", "0"]
    server = subprocess.Popen(restart, env=_environ(repo, data), stdout=subprocess.PIPE, text=True)
    try:
        said = []
        for line in server.stdout:
            said.append(line)
            if "serving" in line:
                break
    finally:
        server.kill()
        server.wait(WAIT)
        server.stdout.close()
    assert any("finished an interrupted apply of 2 file(s): 1 written" in line for line in said)
    after = _rows(data)
    assert after["journals"] == ["recovered"]
    applied, pending = after["rows"]["a.py"], after["rows"]["b.py"]
    assert applied[0] == "applied" and applied[2] is not None and not applied[1]  # with Undo
    assert pending == ("pending", "", None)  # the person can accept it again
    assert list(repo.rglob(f"*{disk.TEMP_SUFFIX}")) == []
