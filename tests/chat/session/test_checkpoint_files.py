"""Rolling back to a checkpoint: the conversation, the files acdc changed since, or both.

Files are restored as new versions through the edits' disk writer, each refused on its
own when it changed since acdc last wrote it; a file the person changed is never touched.
"""

from __future__ import annotations

import pytest

from chat.live.served import served
from chat.repo import indexing
from chat.repo.edits.undo import undo
from chat.session import SessionContext, checkpoints
from contextcore.edits import EditOp
from history import services
from history.models import ContentObject, Message
from tests import serving
from tests.chat.repo.edits_support import written

pytestmark = pytest.mark.django_db
APP = "def greet():\n    return 'hello'\n"
OTHER = "X = 1\n"


@pytest.fixture
def repo_files():
    return {"src/app.py": APP, "src/other.py": OTHER}


@pytest.fixture
def edits_on(settings):
    settings.ACDC_EDITS = True


@pytest.fixture
def mine(served_root, edits_on):
    session = services.session_create(repository=str(served_root), model="acdc/fake")
    session.auto_apply = True
    session.save(update_fields=["auto_apply"])
    return session


def exchange(session, user: str, answer: str) -> Message:
    services.message_append(session=session, role="user", content=user, turn_id=user)
    said = services.message_append(session=session, role="assistant", content=answer, turn_id=user)
    SessionContext.open(session.id, served(), model="acdc/fake").commit()
    return said


def edited_after_a_checkpoint(session, repo):
    """A checkpoint, then a reply whose edits change src/app.py and create new.py."""
    exchange(session, "one", "1")
    mark = checkpoints.take(session, label="before edits")
    said = exchange(session, "two", "2")
    ops = [
        EditOp("src/app.py", "replace", "'hello'", "'ciao'"),
        EditOp("new.py", "create", new_text="A = 1\n"),
    ]
    assert written(session, ops, repo=repo, message=said).applied
    return mark, said


def text_versions(repo, path: str) -> int:
    _, source = indexing.locate(repo, path)
    return ContentObject.objects.get(source=source).versions.exclude(file_hash=None).count()


def test_files_only_restores_what_acdc_changed_as_new_versions_and_keeps_the_conversation(
    mine, served_root
):
    repo = serving.repository()
    mark, _ = edited_after_a_checkpoint(mine, repo)
    (served_root / "src" / "other.py").write_text("X = 2\n")  # the person's own change

    note = checkpoints.rollback(mine.id, mark.id, "files", repo=serving.repository())

    assert (served_root / "src" / "app.py").read_text() == APP
    assert not (served_root / "new.py").exists()
    assert (served_root / "src" / "other.py").read_text() == "X = 2\n"
    assert "- restored: src/app.py v2→v3" in note
    assert "- restored: new.py removed (created after the checkpoint)" in note
    assert text_versions(repo, "src/app.py") == 3  # nothing erased
    assert not Message.objects.filter(content="two", rolled_back=True).exists()
    assert Message.objects.filter(system_event=True, content=note).exists()


def test_a_file_changed_since_acdc_wrote_it_is_refused_and_the_others_restored(mine, served_root):
    repo = serving.repository()
    mark, _ = edited_after_a_checkpoint(mine, repo)
    (served_root / "src" / "app.py").write_text("def greet():\n    return 'mine'\n")

    note = checkpoints.rollback(mine.id, mark.id, "both", repo=serving.repository())

    assert (served_root / "src" / "app.py").read_text() == "def greet():\n    return 'mine'\n"
    assert "not restored: src/app.py changed since acdc last wrote it" in note
    assert not (served_root / "new.py").exists()
    assert Message.objects.get(content="two").rolled_back  # and the conversation too


def test_an_undone_edit_counts_as_acdcs_last_write(mine, served_root):
    repo = serving.repository()
    mark, said = edited_after_a_checkpoint(mine, repo)
    assert undo(mine, said, repo=repo, path="src/app.py").applied

    note = checkpoints.rollback(mine.id, mark.id, "files", repo=serving.repository())

    assert "unchanged: src/app.py is as it was at the checkpoint" in note
    assert (served_root / "src" / "app.py").read_text() == APP


def test_conversation_only_leaves_the_files_and_files_need_edits_on(mine, served_root, settings):
    repo = serving.repository()
    mark, _ = edited_after_a_checkpoint(mine, repo)
    checkpoints.rollback(mine.id, mark.id, repo=serving.repository())
    assert "'ciao'" in (served_root / "src" / "app.py").read_text()
    settings.ACDC_EDITS = False
    with pytest.raises(checkpoints.RollbackRefused, match="conversation, files or both"):
        checkpoints.rollback(mine.id, mark.id, "files", repo=serving.repository())


def test_the_page_rolls_back_the_scope_the_person_chose(client, mine, served_root):
    repo = serving.repository()
    mark, _ = edited_after_a_checkpoint(mine, repo)
    html = client.get(f"/s/{mine.id}/tools/").content.decode()
    assert '<option value="files">Files only</option>' in html
    response = client.post(f"/s/{mine.id}/checkpoints/{mark.id}/rollback/", {"scope": "files"})
    assert response.status_code == 204 and response["HX-Refresh"] == "true"
    assert (served_root / "src" / "app.py").read_text() == APP
    assert not Message.objects.get(content="two").rolled_back
