"""Checkpoints, rollback, undo and message pins over HTTP, as the page's htmx calls them."""

from __future__ import annotations

import pytest
from django.conf import settings

from chat.live.served import served
from chat.session import SessionContext, checkpoints
from history import services
from history.models import Checkpoint, Message, Session

pytestmark = pytest.mark.django_db


def _exchange(session, user: str, answer: str) -> tuple[Message, Message]:
    asked = services.message_append(session=session, role="user", content=user, turn_id=user)
    said = services.message_append(session=session, role="assistant", content=answer, turn_id=user)
    ctx = SessionContext.open(
        session.id, served(), model="acdc/fake"
    )  # the history comes from the rows
    ctx.commit()
    return asked, said


def test_the_tools_fragment_lists_checkpoints_newest_first(client, session):
    checkpoints.take(session, label="first")
    checkpoints.take(session, label="second")
    html = client.get(f"/s/{session.id}/tools/").content.decode()
    assert 'aria-label="Session tools"' in html and "Compact now" in html
    assert html.index("second") < html.index("first")
    assert "Undo compaction" not in html  # nothing to undo


def test_a_checkpoint_is_saved_with_its_label_and_state(client, session):
    _exchange(session, "hello", "hi")
    response = client.post(f"/s/{session.id}/checkpoints/", {"label": "  before refactor "})
    assert response.status_code == 200 and "before refactor" in response.content.decode()
    checkpoint = Checkpoint.objects.get(session=session)
    assert checkpoint.label == "before refactor" and checkpoint.kind == "manual"
    # A position, not a copy: the last message and the live compactions.
    assert checkpoint.last_seq == 1 and checkpoint.compactions == []
    assert "history" not in checkpoint.context_state["engine"]


def test_rolling_back_refreshes_the_page_and_refusals_say_why(client, session):
    _exchange(session, "one", "1")
    mark = checkpoints.take(session, label="after one")
    _exchange(session, "two", "2")
    response = client.post(f"/s/{session.id}/checkpoints/{mark.id}/rollback/")
    assert response.status_code == 204 and response["HX-Refresh"] == "true"
    assert Message.objects.get(content="two").rolled_back

    other = services.session_create(repository=str(settings.ACDC_REPO))
    refused = client.post(f"/s/{other.id}/checkpoints/{mark.id}/rollback/")
    assert refused.status_code == 200 and "another session" in refused.content.decode()
    missing = client.post(f"/s/{session.id}/checkpoints/999999/rollback/")
    assert "no such checkpoint" in missing.content.decode()


def test_undo_without_a_compaction_says_so(client, session):
    response = client.post(f"/s/{session.id}/compaction/undo/")
    assert response.status_code == 200
    assert "no compaction to undo" in response.content.decode()


def test_pinning_a_message_reaches_the_engine_history(client, session):
    asked, _ = _exchange(session, "always use tabs", "ok")
    response = client.post(f"/m/{asked.id}/pin/", {"pinned": "true"})
    assert response.status_code == 200 and 'aria-pressed="true"' in response.content.decode()
    assert Message.objects.get(pk=asked.pk).pinned
    history = SessionContext.open(session.id, served()).manager.get_history()
    assert history[0]["pinned"] is True
    client.post(f"/m/{asked.id}/pin/", {"pinned": "false"})
    history = SessionContext.open(session.id, served()).manager.get_history()
    assert "pinned" not in history[0]


def test_pinning_needs_a_real_message_and_a_post(client, session):
    note = services.message_append(session=session, role="system", content="n", system_event=True)
    assert client.post(f"/m/{note.id}/pin/").status_code == 404
    assert client.post("/m/nope/pin/").status_code == 404
    assert client.get(f"/s/{session.id}/checkpoints/").status_code == 405
    assert client.post("/s/sess_0_000000/checkpoints/").status_code == 404


def test_the_endless_switch_and_template_chooser(client, session):
    form = client.get(f"/s/{session.id}/endless/").content.decode()
    assert 'name="enabled"' in form and '<option value="default"' in form
    response = client.post(f"/s/{session.id}/endless/", {"enabled": "on", "template": "default"})
    assert " checked" in response.content.decode()
    assert Session.objects.get(pk=session.pk).endless == {
        "enabled": True,
        "template": "default",
    }
    refused = client.post(f"/s/{session.id}/endless/", {"enabled": "on", "template": "nope"})
    assert 'role="alert"' in refused.content.decode()
    assert Session.objects.get(pk=session.pk).endless["template"] == "default"


def test_related_context_is_toggled_per_session(client, session):
    assert 'name="grounding"' in client.get(f"/s/{session.id}/tools/").content.decode()
    client.post(f"/s/{session.id}/grounding/", {"grounding": "on"})
    assert Session.objects.get(pk=session.pk).grounding is True
    client.post(f"/s/{session.id}/grounding/", {})
    assert Session.objects.get(pk=session.pk).grounding is False
