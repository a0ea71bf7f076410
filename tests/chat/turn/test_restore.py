"""Auto-restore at start: the newest session's messages and selection come back."""

from __future__ import annotations

import pytest
from django.conf import settings

from chat.live.served import served
from chat.repo import sessionsets
from chat.session.setchanges import (
    RESTORED,
    current_hud,
    restore_latest_session,
    select_files,
)
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
    assert sessionsets.active_paths(Session.objects.get(pk=newest.id), repo) == ["keep.py"]
    assert len(notices) == 1 and "gone.py" in notices[0]
    note = Message.objects.get(session=newest, system_event=True)
    assert "gone.py" in note.content
    assert current_hud(Session.objects.get(pk=newest.id), served())["files"] == 1


def test_a_restore_leaves_the_counting_to_the_page(root):
    """Counting at start-up loads the counter's encoding (about 40 MB) before anyone looks:
    the restore keeps the saved figures, marked out of date, and the page's `current_hud`
    counts them afresh (a file changed while the server was off is counted as it is now)."""
    session = services.session_create(repository=str(root), model="acdc/fake")
    services.message_append(session=session, role="user", content="hello")
    assert select_files(session.id, wiring=served(), add=["keep.py"]) == []
    before = Session.objects.get(pk=session.id).context_state["hud"]
    (root / "keep.py").write_text("KEEP = 1\n" * 400)

    restore_latest_session(str(settings.ACDC_REPO), served())

    saved = Session.objects.get(pk=session.id).context_state["hud"]
    assert saved == {**before, "instructions_mark": RESTORED}
    shown = current_hud(Session.objects.get(pk=session.id), served())
    assert shown["instructions_mark"] != RESTORED and shown != before


def test_restoring_with_no_sessions_is_quiet(root):
    assert restore_latest_session(str(root), served()) == (None, [])


def test_a_selection_refusal_says_why(root):
    session = services.session_create(repository=str(root), model="acdc/fake")
    problems = select_files(session.id, wiring=served(), add=["../outside.py", "missing.py"])
    assert len(problems) == 2
    assert all(":" in p for p in problems)


def test_a_restart_restores_its_session_without_loading_the_encoding(root):
    """A restart's restore opens the session, whose requests' budget counts the tools'
    definitions: the count kept in the data folder serves it, so no encoding is loaded
    before anyone sends (a restart held 180 MB against a first start's 160)."""
    from chat.live.served import Served

    session = services.session_create(repository=str(root), model="acdc/fake")
    services.message_append(session=session, role="user", content="hello")
    assert select_files(session.id, wiring=served(), add=["keep.py"]) == []

    restarted = Served.build()
    restore_latest_session(str(settings.ACDC_REPO), restarted)

    counters = restarted.runtime._counters.values()
    assert [c.encoding_name for c in counters if c._encoding is not None] == []
