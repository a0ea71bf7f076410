"""Auto-restore at start: the newest session's messages and selection come back."""

from __future__ import annotations

import pytest
from django.conf import settings

from chat.live.served import served
from chat.session.setchanges import restore_latest_session, select_files, selected_files
from history import services
from history.models import Message, Session

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("served_root")]


@pytest.fixture
def repo_files():
    return {"keep.py": "KEEP = 1\n", "gone.py": "GONE = 1\n"}


def test_the_newest_session_comes_back_with_its_selection(root):
    older = services.session_create(repository=str(root), model="acdc/fake")
    newest = services.session_create(repository=str(root), model="acdc/fake")
    services.message_append(session=newest, role="user", content="hello")
    assert select_files(newest.id, wiring=served(), add=["keep.py", "gone.py"]) == []
    (root / "gone.py").unlink()

    session, notices = restore_latest_session(str(settings.ACDC_REPO), served())

    assert session.id == newest.id != older.id
    repo = served().repository.indexed()
    assert selected_files(Session.objects.get(pk=newest.id), repo) == ["keep.py"]
    assert len(notices) == 1 and "gone.py" in notices[0]
    note = Message.objects.get(session=newest, system_event=True)
    assert "gone.py" in note.content
    assert Session.objects.get(pk=newest.id).context_state["hud"]["files"] == 1


def test_restoring_with_no_sessions_is_quiet(root):
    assert restore_latest_session(str(root), served()) == (None, [])


def test_a_selection_refusal_says_why(root):
    session = services.session_create(repository=str(root), model="acdc/fake")
    problems = select_files(session.id, wiring=served(), add=["../outside.py", "missing.py"])
    assert len(problems) == 2
    assert all(":" in p for p in problems)
