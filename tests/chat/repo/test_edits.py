"""Applying the model's edits to a real folder: the boundary, atomic writes, whole sets,
re-anchoring, versions, and undo."""

from __future__ import annotations

import os
import stat

import pytest
from django.test import override_settings

from chat.repo import indexing
from chat.repo.edits import disk
from chat.repo.edits.applying import accept, propose
from chat.repo.edits.undo import undo
from chat.repo.repomap.builder import RepoMaps
from chat.repo.watcher import RepositoryWatcher
from contextcore.edits import EditOp
from history import services
from history.models import ContentObject, Message, ObjectVersion, PendingEdit
from tests.chat.repo.edits_support import written

pytestmark = pytest.mark.django_db
APP = "def greet(name):\n    return 'hello ' + name\n\n\ndef leave():\n    return 'bye'\n"


@pytest.fixture
def repo_files():
    return {
        "src/app.py": APP,
        "src/other.py": "X = 1\n",
        ".env": "TOKEN=abc\n",
        ".git/config": "[core]\n",
        "blob.bin": b"\x00\x01hello",
    }


@pytest.fixture
def auto(session):
    session.auto_apply = True
    session.save(update_fields=["auto_apply"])
    return session


def replace(path: str, old: str, new: str) -> EditOp:
    return EditOp(path, "replace", old, new)


def versions(repo, path: str) -> int:
    _, source = indexing.locate(repo, path)
    obj = ContentObject.objects.filter(source=source).first()
    return obj.versions.count() if obj else 0


def test_it_refuses_every_path_outside_the_boundary_and_touches_nothing(
    session, repo, root, tmp_path
):
    data = root / ".acdc"
    data.mkdir()
    (data / "acdc.sqlite3").write_text("db\n")
    (tmp_path / "outside.txt").write_text("outside\n")
    os.symlink(tmp_path / "outside.txt", root / "link.txt")
    targets = ["../outside.txt", ".git/config", ".acdc/acdc.sqlite3", ".env", "blob.bin"]
    targets.append("link.txt")
    before = {p: (root / p).read_bytes() for p in targets}
    with override_settings(ACDC_DATA_DIR=data):
        outcome = propose(
            session, [replace(p, "o", "0") for p in targets] + [EditOp(".env", "delete")], repo=repo
        )
    assert {p: (root / p).read_bytes() for p in targets} == before
    assert (root / ".env").exists()
    rows = list(PendingEdit.objects.filter(session=session).order_by("id"))
    assert [row.status for row in rows] == [PendingEdit.Status.FAILED] * 7
    reasons = [row.result for row in rows]
    assert "('..') is not allowed" in reasons[0] and "git's internal folder" in reasons[1]
    assert "acdc's own data folder" in reasons[2] and "secret" in reasons[3]
    assert "binary" in reasons[4] and "outside the repository" in reasons[5]
    assert "Edit 1 of 7" in outcome.report and not outcome.applied


def test_an_applied_edit_keeps_permissions_line_endings_and_bom(auto, repo, root):
    script = root / "run.sh"
    script.write_bytes("\ufeffecho one\r\necho two\r\n".encode())
    script.chmod(0o751)
    outcome = written(auto, [replace("run.sh", "echo two\n", "echo 2\necho 3\n")], repo=repo)
    assert outcome.applied, outcome.text()
    assert script.read_bytes() == "\ufeffecho one\r\necho 2\r\necho 3\r\n".encode()
    assert stat.S_IMODE(script.stat().st_mode) == 0o751
    assert not [p for p in os.listdir(root) if p.endswith(disk.TEMP_SUFFIX)]
    assert outcome.lines == ["applied: run.sh v1→v2, +2 −1"]


def test_one_bad_edit_in_a_set_means_nothing_is_written(session, repo, root):
    proposed = propose(
        session,
        [replace("src/other.py", "X = 1", "X = 2"), replace("src/app.py", "'bye'", "'ciao'")],
        repo=repo,
    )
    assert proposed.lines[0].startswith("pending review: src/other.py, +1 −1 (")
    (root / "src" / "app.py").write_text(APP.replace("'bye'", "'adieu'"))  # the person's change
    ids = PendingEdit.objects.filter(session=session).values_list("pk", flat=True)
    outcome = accept(session, ids, repo=repo)
    assert not outcome.applied and "old text was not found" in outcome.report
    assert (root / "src" / "other.py").read_text() == "X = 1\n"
    statuses = dict(PendingEdit.objects.values_list("path", "status"))
    assert statuses == {"src/other.py": "pending", "src/app.py": "failed"}


def test_a_stale_edit_is_reanchored_when_its_old_text_still_matches_once(session, repo, root):
    indexing.index_file(repo, "src/app.py", session=session)  # what the model read
    (root / "src" / "app.py").write_text("import os\n\n" + APP)  # the person adds a line
    outcome = propose(session, [replace("src/app.py", "'bye'", "'ciao'")], repo=repo)
    accept(session, PendingEdit.objects.values_list("pk", flat=True), repo=repo)
    assert outcome.lines[0].startswith("pending review: src/app.py, +1 −1 (")
    assert (root / "src" / "app.py").read_text() == "import os\n\n" + APP.replace("bye", "ciao")
    assert PendingEdit.objects.get().base_sha256  # it named the version the model saw


def test_a_stale_edit_whose_old_text_changed_is_a_conflict_and_writes_nothing(session, repo, root):
    indexing.index_file(repo, "src/app.py", session=session)
    propose(session, [replace("src/app.py", "'bye'", "'ciao'")], repo=repo)
    changed = APP.replace("'bye'", "'see you'")
    (root / "src" / "app.py").write_text(changed)
    outcome = accept(session, PendingEdit.objects.values_list("pk", flat=True), repo=repo)
    assert not outcome.applied and "changed since the model read it" in outcome.report
    assert PendingEdit.objects.get().status == PendingEdit.Status.CONFLICT
    assert (root / "src" / "app.py").read_text() == changed


def test_a_stale_edit_that_never_matched_what_the_model_saw_is_a_plain_failure(session, repo, root):
    indexing.index_file(repo, "src/app.py", session=session)
    (root / "src" / "app.py").write_text("import os\n\n" + APP)
    outcome = propose(session, [replace("src/app.py", "'hullo'", "'hi'")], repo=repo)
    assert PendingEdit.objects.get().status == PendingEdit.Status.FAILED  # not a conflict
    assert "old text was not found" in outcome.report


def test_an_applied_edit_is_a_new_version_and_undo_writes_another(auto, repo, root):
    message = services.message_append(session=auto, role=Message.Role.ASSISTANT, content="ok")
    written(auto, [replace("src/app.py", "'bye'", "'ciao'")], repo=repo, message=message)
    row = PendingEdit.objects.get()
    assert row.status == "applied" and row.version_after.content == APP.replace("bye", "ciao")
    message.refresh_from_db()
    assert message.files_modified == ["src/app.py"]
    assert message.edit_results[0]["result"] == "applied: src/app.py v1→v2, +1 −1"

    outcome = undo(auto, message, repo=repo, path="src/app.py")
    assert outcome.lines == ["undone: src/app.py v2→v3"]
    assert (root / "src" / "app.py").read_text() == APP
    assert versions(repo, "src/app.py") == 3  # nothing erased
    assert PendingEdit.objects.get().status == PendingEdit.Status.UNDONE


def test_undo_is_refused_when_the_file_changed_since_acdc_wrote_it(auto, repo, root):
    message = services.message_append(session=auto, role=Message.Role.ASSISTANT, content="ok")
    written(auto, [EditOp("new.py", "create", new_text="A = 1\n")], repo=repo, message=message)
    (root / "new.py").write_text("A = 2\n")
    outcome = undo(auto, message, repo=repo)
    assert not outcome.applied and "changed since acdc wrote it" in outcome.lines[0]
    assert (root / "new.py").read_text() == "A = 2\n"
    assert PendingEdit.objects.get().status == PendingEdit.Status.APPLIED
    (root / "new.py").write_text("A = 1\n")
    assert undo(auto, message, repo=repo).applied and not (root / "new.py").exists()


def test_the_watcher_records_no_second_version_for_acdcs_own_write(session, repo, root):
    indexing.index_file(repo, "src/app.py", session=session)
    # acdc's writes are noted in the repository's own writes (the served object's)
    watcher = RepositoryWatcher(repo, None, maps=RepoMaps(), own_writes=repo.own_writes)
    disk.write_text(root / "src" / "app.py", APP + "# acdc\n", repo.own_writes)
    [change] = watcher.index(["src/app.py"])
    assert change.outcome == "written" and versions(repo, "src/app.py") == 1
    (root / "src" / "app.py").write_text(APP + "# the person\n")
    watcher.index(["src/app.py"])
    assert versions(repo, "src/app.py") == 2
    assert ObjectVersion.objects.filter(content=APP + "# the person\n").exists()
