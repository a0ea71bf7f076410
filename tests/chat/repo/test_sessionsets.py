"""The session's object sets: one state for the picker and the model's tools (seed 001 §3)."""

from __future__ import annotations

import pytest

from chat.repo import sessionsets
from chat.repo.indexing import discover_file, record_toolcall
from chat.repo.sessionsets import SetsError
from history import services
from history.models import ObjectVersion, SessionObject

pytestmark = pytest.mark.django_db


def _entry(session, repo, path):
    return next(e for e in sessionsets.entries(session, repo) if e.path == path)


def test_activating_a_path_reads_it_into_pool_and_active_set(session, repo):
    entry = sessionsets.activate(session, "src/app.py", repo=repo)
    assert (entry.path, entry.in_pool, entry.active, entry.stub) == (
        "src/app.py",
        True,
        True,
        False,
    )
    assert entry.content == "print('hi')\n" and entry.char_count == 12
    assert sessionsets.active_paths(session, repo) == ["src/app.py"]


def test_activating_a_discovery_stub_runs_full_indexing(session, repo):
    stub = discover_file(repo, "README.md", session=session)
    before = _entry(session, repo, "README.md")
    assert before.stub and not before.active and before.char_count is None
    entry = sessionsets.activate(session, stub.object.id, repo=repo)
    assert entry.active and not entry.stub and entry.content == "# Readme\n"
    assert ObjectVersion.objects.filter(object=stub.object).count() == 2


def test_deactivating_keeps_the_object_in_the_metadata_pool(session, repo):
    sessionsets.activate(session, "src/app.py", repo=repo)
    entry = sessionsets.deactivate(session, "src/app.py", repo=repo)
    assert entry.in_pool and not entry.active
    assert SessionObject.objects.filter(session=session).count() == 1


def test_pins_are_independent_of_activity(session, repo):
    sessionsets.pin(session, "README.md", repo=repo)
    assert sessionsets.pinned_paths(session, repo) == ["README.md"]
    assert not _entry(session, repo, "README.md").active
    sessionsets.activate(session, "README.md", repo=repo)
    sessionsets.deactivate(session, "README.md", repo=repo)
    assert _entry(session, repo, "README.md").pinned
    sessionsets.unpin(session, "README.md", repo=repo)
    assert sessionsets.pinned_paths(session, repo) == []


def test_the_picker_sets_exactly_the_checked_files_and_leaves_toolcalls(session, repo):
    record_toolcall(session=session, call_id="c1", tool="grep", args={}, status="ok", output="x")
    sessionsets.set_active_files(session, ["src/app.py", "README.md"], repo=repo)
    problems = sessionsets.set_active_files(session, ["README.md", "nope.txt"], repo=repo)
    assert problems == ["nope.txt: no such file"]
    assert sessionsets.active_paths(session, repo) == ["README.md"]
    toolcall = next(e for e in sessionsets.entries(session, repo) if e.type == "toolcall")
    assert toolcall.active and toolcall.tool == "grep" and toolcall.status == "ok"


def test_two_sessions_share_one_object_but_not_their_sets(repo):
    first = services.session_create(repository="/repo")
    second = services.session_create(repository="/repo")
    a = sessionsets.activate(first, "src/app.py", repo=repo)
    b = sessionsets.pin(second, "src/app.py", repo=repo)
    assert a.object_id == b.object_id
    assert _entry(first, repo, "src/app.py").active and not _entry(first, repo, "src/app.py").pinned
    assert (
        _entry(second, repo, "src/app.py").pinned and not _entry(second, repo, "src/app.py").active
    )


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("../outside.txt", "no object"),
        ("/etc/passwd", "outside the repository"),
        ("", "no object id or path"),
        ("src/missing.py", "no such file"),
        ("a\0b", "NUL"),
    ],
)
def test_bad_references_are_refused_with_a_reason(session, repo, ref, message):
    with pytest.raises(SetsError, match=message):
        sessionsets.activate(session, ref, repo=repo)


def test_changing_an_object_the_session_never_saw_is_refused(session, repo):
    with pytest.raises(SetsError, match="not in this session"):
        sessionsets.deactivate(session, "src/app.py", repo=repo)


def test_activating_a_deleted_file_is_refused(session, repo, root):
    sessionsets.activate(session, "src/app.py", repo=repo)
    (root / "src" / "app.py").unlink()
    with pytest.raises(SetsError, match="no longer exists"):
        sessionsets.activate(session, "src/app.py", repo=repo)


def test_resume_reconciles_changed_deleted_and_unreachable_files(session, repo, root):
    for path in ("src/app.py", "README.md"):
        sessionsets.activate(session, path, repo=repo)
    (root / "notes.txt").write_text("n\n")
    sessionsets.activate(session, "notes.txt", repo=repo)
    discover_file(repo, "src/never_read.py", session=session)

    (root / "src" / "app.py").write_text("print('changed')\n")
    (root / "README.md").unlink()
    (root / "notes.txt").write_bytes(b"\x00binary now")

    report = dict(sessionsets.resume(session, repo))
    assert report == {
        "src/app.py": "updated",
        "README.md": "deleted",
        "notes.txt": "unreachable",
        "src/never_read.py": "unchanged",
    }
    assert _entry(session, repo, "src/app.py").content == "print('changed')\n"
    deleted = _entry(session, repo, "README.md")
    assert deleted.deleted and deleted.content is None
    assert _entry(session, repo, "notes.txt").content == "n\n"  # the latest version stays
    assert dict(sessionsets.resume(session, repo))["README.md"] == "unchanged"
