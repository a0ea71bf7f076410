from __future__ import annotations

import os

import pytest
from django.db import IntegrityError, transaction

from chat.repo.indexing import (
    IndexingError,
    Outcome,
    Repository,
    Trigger,
    discover_file,
    index_file,
    locate,
    record_toolcall,
)
from history import objects, services
from history.models import ContentObject, ObjectVersion, SessionObject

pytestmark = pytest.mark.django_db


@pytest.fixture
def repo_files():
    return {"src/app.py": "print('hi')\n"}


def _link(session, result):
    return SessionObject.objects.get(session=session, object=result.object)


def test_the_first_read_creates_an_object_whose_id_is_its_identity_hash(repo, root):
    result = index_file(repo, "src/app.py")
    source = objects.filesystem_source("fs-test", str(root.resolve() / "src" / "app.py"))
    assert result.outcome == Outcome.CREATED
    assert result.object.id == objects.identity_hash("file", source=source)
    assert result.object.identity_hash == result.object.id
    assert result.object.source == source
    assert result.version.content == "print('hi')\n"
    assert result.version.file_hash == objects.sha256_hex(b"print('hi')\n")
    assert result.version.fields == {"file_type": "py", "char_count": 12}


def test_reading_an_unchanged_file_writes_no_version(repo):
    first = index_file(repo, "src/app.py")
    again = index_file(repo, "./src//app.py")
    assert again.outcome == Outcome.UNCHANGED
    assert again.version == first.version
    assert ObjectVersion.objects.count() == 1


def test_an_edited_file_gets_a_new_version_and_keeps_the_old_one(repo, root):
    first = index_file(repo, "src/app.py")
    (root / "src" / "app.py").write_text("print('bye')\n")
    second = index_file(repo, "src/app.py", trigger=Trigger.WATCHER)
    assert second.outcome == Outcome.UPDATED
    assert second.object == first.object
    assert second.version.content == "print('bye')\n"
    assert list(first.object.versions.values_list("content", flat=True)) == [
        "print('hi')\n",
        "print('bye')\n",
    ]


def test_discovery_creates_a_stub_with_null_content(repo):
    result = discover_file(repo, "src/app.py")
    assert result.outcome == Outcome.CREATED
    assert result.version.file_hash is None  # never read: §4.1 renders it `[unread]`
    assert (result.version.content, result.version.content_hash) == (None, None)
    assert result.version.fields == {"file_type": "py", "char_count": 0}


def test_discovery_never_overwrites_an_existing_object(repo):
    read = index_file(repo, "src/app.py")
    found = discover_file(repo, "src/app.py")
    assert found.outcome == Outcome.UNCHANGED
    assert found.version == read.version
    assert found.version.content == "print('hi')\n"


def test_reading_a_discovered_stub_updates_it_to_the_same_object(repo):
    stub = discover_file(repo, "src/app.py")
    read = index_file(repo, "src/app.py")
    assert read.outcome == Outcome.UPDATED
    assert read.object == stub.object
    assert read.version.content == "print('hi')\n"


def test_a_deleted_file_gets_a_null_version_and_keeps_its_history(repo, root):
    index_file(repo, "src/app.py")
    (root / "src" / "app.py").unlink()
    gone = index_file(repo, "src/app.py", trigger=Trigger.RESUME)
    assert gone.outcome == Outcome.UPDATED
    assert gone.deleted
    assert gone.object.versions.count() == 2
    assert index_file(repo, "src/app.py").outcome == Outcome.UNCHANGED


def test_a_file_that_comes_back_after_deletion_is_updated(repo, root):
    index_file(repo, "src/app.py")
    (root / "src" / "app.py").unlink()
    index_file(repo, "src/app.py")
    (root / "src" / "app.py").write_text("print('hi')\n")
    back = index_file(repo, "src/app.py")
    assert back.outcome == Outcome.UPDATED
    assert back.version.content == "print('hi')\n"


def test_reading_a_file_that_never_existed_is_an_error(repo):
    with pytest.raises(IndexingError, match="no such file"):
        index_file(repo, "src/missing.py")
    assert not ContentObject.objects.exists()


def test_an_agent_read_activates_and_discovery_only_pools(repo, root, session):
    (root / "README.md").write_text("# hi\n")
    read = index_file(repo, "src/app.py", session=session)
    found = discover_file(repo, "README.md", session=session)
    assert (_link(session, read).in_pool, _link(session, read).active) == (True, True)
    assert (_link(session, found).in_pool, _link(session, found).active) == (True, False)


def test_a_watcher_event_does_not_reactivate_what_the_agent_deactivated(repo, root, session):
    read = index_file(repo, "src/app.py", session=session)
    SessionObject.objects.filter(session=session).update(active=False)
    (root / "src" / "app.py").write_text("changed\n")
    index_file(repo, "src/app.py", session=session, trigger=Trigger.WATCHER)
    assert _link(session, read).active is False


def test_discovering_an_active_file_leaves_it_active(repo, session):
    read = index_file(repo, "src/app.py", session=session)
    discover_file(repo, "src/app.py", session=session)
    assert _link(session, read).active is True


def test_two_sessions_share_one_object_with_their_own_sets(repo):
    one = services.session_create(repository="/repo")
    two = services.session_create(repository="/repo")
    a = index_file(repo, "src/app.py", session=one)
    b = discover_file(repo, "src/app.py", session=two)
    assert a.object == b.object
    assert ContentObject.objects.count() == 1
    assert _link(one, a).active is True
    assert _link(two, b).active is False


def test_a_symlink_inside_the_repository_is_the_same_object(repo, root):
    os.symlink(root / "src" / "app.py", root / "alias.py")
    assert index_file(repo, "alias.py").object == index_file(repo, "src/app.py").object


@pytest.mark.parametrize(
    "path, reason",
    [
        ("../outside.txt", "traversal"),
        ("src/../../outside.txt", "traversal"),
        ("/etc/passwd", "absolute path outside"),
        ("src/app\0.py", "NUL"),
        ("", "empty"),
        ("escape.txt", "outside the repository"),
    ],
)
def test_bad_paths_are_rejected_before_anything_is_read(repo, root, path, reason):
    (root.parent / "outside.txt").write_text("secret\n")
    os.symlink(root.parent / "outside.txt", root / "escape.txt")
    with pytest.raises(IndexingError, match=reason):
        index_file(repo, path)
    with pytest.raises(IndexingError, match=reason):
        discover_file(repo, path)
    assert not ContentObject.objects.exists()


def test_an_absolute_path_inside_the_repository_is_accepted(repo, root):
    key, _ = locate(repo, str(root / "src" / "app.py"))
    assert key == "src/app.py"


@pytest.mark.parametrize(
    "name, data, reason",
    [
        ("bin.dat", b"a\0b", "binary"),
        ("latin1.txt", b"caf\xe9", "not valid UTF-8"),
        ("big.txt", b"x" * 101, "too large"),
    ],
)
def test_files_that_are_not_text_or_too_large_are_refused(root, name, data, reason):
    (root / name).write_bytes(data)
    with pytest.raises(IndexingError, match=reason):
        index_file(Repository(root=root, filesystem_id="fs", size_cap=100), name)


def test_a_directory_or_fifo_is_not_a_regular_file(repo, root):
    os.mkfifo(root / "pipe")
    for name in ("src", "pipe"):
        with pytest.raises(IndexingError, match="not a regular file"):
            index_file(repo, name)


def test_a_mount_mapping_sets_the_canonical_path_and_filesystem(root):
    mapping = objects.MountMapping(str(root.resolve()), "/host/project", "host-fs")
    mapped = Repository(root=root, filesystem_id="container", mappings=(mapping,))
    result = index_file(mapped, "src/app.py")
    assert result.object.source == objects.filesystem_source("host-fs", "/host/project/src/app.py")
    assert objects.to_display(result.object.source, (mapping,)) == str(
        root.resolve() / "src" / "app.py"
    )


def test_a_toolcall_is_written_once_and_activated(session):
    result = record_toolcall(
        session=session, call_id="call_1", tool="ls", args={"path": "."}, status="ok", output="a\n"
    )
    assert result.object.id == f"toolcall:{session.id}:call_1"
    assert result.object.identity_hash == objects.identity_hash(
        "toolcall", object_id=result.object.id
    )
    assert result.object.source is None
    assert result.version.fields["chat_ref"] == f"chat:{session.id}"
    assert result.version.file_hash is None
    assert _link(session, result).active is True
    with pytest.raises(IndexingError, match="already recorded"):
        record_toolcall(
            session=session, call_id="call_1", tool="ls", args={}, status="ok", output=""
        )


def test_the_database_refuses_an_active_object_outside_the_pool(repo, session):
    read = index_file(repo, "src/app.py", session=session)
    with pytest.raises(IntegrityError), transaction.atomic():
        SessionObject.objects.filter(pk=_link(session, read).pk).update(in_pool=False)
