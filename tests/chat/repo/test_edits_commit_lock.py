"""A Commit after acdc was killed mid-commit: the index lock its dead git left is removed.

The commit's git runs in a process the test starts (as acdc's server would run it), with
a pre-commit hook that waits; the test kills that process with SIGKILL, then the git and
its hook, for real. While that git still runs the lock is named and left alone; once it is
dead the next Commit removes the lock (the data folder's record proves it was that git's)
and commits.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chat.repo.edits.commit import CommitRefused, commit
from chat.repo.edits.gitlock import RECORDS
from contextcore.edits import EditOp
from history import services
from tests import serving
from tests.chat.repo.edits_support import written
from tests.chat.repo.git_support import commit_everything, git

pytestmark = pytest.mark.django_db
WAIT = 60.0

GIT_IN_ACDC = """
import sys
from pathlib import Path
from chat.repo.edits import gitlock
root, records, hooks = map(Path, sys.argv[1:])
git = ["-c", f"core.hooksPath={hooks}", "commit", "-qm", "B", "--only", "--", "src/other.py"]
gitlock.run(root, git, records=records, stdin=None, timeout=600)
"""


@pytest.fixture
def repo_files():
    return {"src/app.py": "A = 1\n", "src/other.py": "B = 1\n"}


@pytest.fixture
def repo_is_git():
    return True


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + WAIT
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def test_the_lock_of_a_git_acdc_started_and_that_died_is_removed(served_root, settings, tmp_path):
    settings.ACDC_EDITS, settings.ACDC_DATA_DIR = True, tmp_path / "data"
    commit_everything(served_root)
    session = services.session_create(repository=str(served_root), model="acdc/fake")
    op = EditOp("src/app.py", "replace", "A = 1", "A = 2")
    said = services.message_append(session=session, role="assistant", content="ok", turn_id="t")
    assert written(session, [op], repo=serving.repository(), message=said, turn_id="t").applied
    (served_root / "src" / "other.py").write_text("B = 2\n")
    git(served_root, "add", "src/other.py")
    hooks, started = tmp_path / "hooks", tmp_path / "hook-started"
    hooks.mkdir()
    (hooks / "pre-commit").write_text(f"#!/bin/sh\ntouch {started}\nexec sleep 600\n")
    (hooks / "pre-commit").chmod(0o755)
    records = settings.ACDC_DATA_DIR / RECORDS
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[3])}
    argv = [sys.executable, "-c", GIT_IN_ACDC, str(served_root), str(records), str(hooks)]
    acdc = subprocess.Popen(argv, env=env, start_new_session=True)
    try:
        _wait_for(started)
        acdc.kill()  # kill -9 of acdc alone: its git goes on, in the hook
        acdc.wait(WAIT)
        lock = served_root / ".git" / "index.lock"
        with pytest.raises(CommitRefused) as refused:
            commit(session, "Bump A", repo=serving.repository())
        assert f"{lock} is held by a git acdc started (pid " in str(refused.value)
        assert lock.exists()
    finally:
        os.killpg(acdc.pid, signal.SIGKILL)  # then the git and its hook, dead mid-commit
    assert lock.exists()

    done = commit(session, "Bump A", repo=serving.repository())

    assert done.paths == ["src/app.py"] and not lock.exists()
    assert git(served_root, "log", "-1", "--format=%s") == "Bump A\n"
    assert git(served_root, "status", "--porcelain") == "M  src/other.py\n"  # still staged
    assert list(records.iterdir()) == []


def test_a_lock_acdc_cannot_prove_its_own_is_named_with_a_way_out(served_root, settings, tmp_path):
    settings.ACDC_EDITS, settings.ACDC_DATA_DIR = True, tmp_path / "data"
    commit_everything(served_root)
    session = services.session_create(repository=str(served_root), model="acdc/fake")
    op = EditOp("src/app.py", "replace", "A = 1", "A = 2")
    said = services.message_append(session=session, role="assistant", content="ok", turn_id="t")
    assert written(session, [op], repo=serving.repository(), message=said, turn_id="t").applied
    lock = served_root / ".git" / "index.lock"
    lock.write_bytes(b"")  # another program's git, or one from before any record

    with pytest.raises(CommitRefused) as refused:
        commit(session, "Bump A", repo=serving.repository())

    assert str(refused.value) == (
        f"git add failed: {lock} exists: another git may be running in this repository; "
        f"if none is, remove it (rm {lock}) and commit again"
    )
    assert lock.exists()
