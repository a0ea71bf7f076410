"""The Context panel's project instructions: listed with their tokens, switched per session."""

from __future__ import annotations

import pytest

from chat.live.served import served
from chat.repo import instructions
from chat.session.setchanges import refresh_sets
from history import services
from history.models import Session

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("served_root")]


@pytest.fixture
def repo_files() -> dict[str, str | bytes]:
    return {"AGENTS.md": "Use tabs, never spaces.\n" * 30, "src/app.py": "print('hi')\n"}


@pytest.fixture
def session(served_root):
    return services.session_create(repository=str(served_root), model="acdc/fake")


def toggle(client, session, *, on: bool) -> str:
    response = client.post(f"/s/{session.id}/instructions/", {"instructions": "on"} if on else {})
    assert response.status_code == 200
    return response.content.decode()


def test_switching_off_keeps_it_on_the_session_and_the_panel_says_so(client, session):
    html = toggle(client, session, on=False)

    assert Session.objects.get(pk=session.pk).instructions is False
    assert 'aria-label="Context"' in html
    assert '<code>AGENTS.md</code><span class="small">off for this session</span>' in html
    assert 'name="instructions" checked' not in html
    assert "seg-instructions" not in html  # no tokens of theirs in the budget


def test_switching_on_lists_the_file_with_its_tokens(client, session):
    toggle(client, session, on=False)

    html = toggle(client, session, on=True)

    assert Session.objects.get(pk=session.pk).instructions is True
    assert 'name="instructions" checked' in html
    assert '<li><code>AGENTS.md</code><span class="num" title=' in html
    assert "seg-instructions" in html and "Instructions" in html


def test_the_panel_after_a_reload_shows_the_switch_as_left(client, session):
    toggle(client, session, on=False)

    page = client.get(f"/s/{session.id}/").content.decode()

    assert "off for this session" in page
    assert 'name="instructions" checked' not in page


def test_a_new_session_shows_them_before_anything_is_sent(client, session):
    page = client.get(f"/s/{session.id}/").content.decode()

    assert "Nothing sent yet" not in page
    assert 'name="instructions" checked' in page and "<code>AGENTS.md</code>" in page


def test_without_them_a_new_session_still_shows_nothing_sent_yet(client, session, served_root):
    (served_root / "AGENTS.md").unlink()

    page = client.get(f"/s/{session.id}/").content.decode()

    assert "Nothing sent yet" in page and 'name="instructions"' not in page


def test_an_unknown_session_is_not_found(client):
    assert client.post("/s/nope/instructions/", {}).status_code == 404


def test_only_post_changes_it(client, session):
    assert client.get(f"/s/{session.id}/instructions/").status_code == 405


def test_a_page_drawn_after_an_instructions_file_came_lists_it(client, session, served_root):
    (served_root / "AGENTS.md").unlink()
    (served_root / "CLAUDE.md").write_text("Keep it short.\n")
    refresh_sets(session.id, served())  # figures saved while there was only CLAUDE.md
    assert "<code>AGENTS.md</code>" not in client.get(f"/s/{session.id}/").content.decode()
    (served_root / "AGENTS.md").write_text("Run the tests first.\n")  # no message sent since

    html = client.get(f"/s/{session.id}/").content.decode()

    assert "<code>AGENTS.md</code>" in html
    saved = Session.objects.get(pk=session.pk).context_state["hud"]["instructions"]
    assert [f["name"] for f in saved["files"]] == ["AGENTS.md"] and saved["files"][0]["tokens"]


def test_a_file_written_while_it_was_read_is_figured_again(
    client, session, served_root, monkeypatch
):
    reading = instructions._read

    def read_then_finished(root, name, rules):
        found = reading(root, name, rules)
        if name == "AGENTS.md":  # the writer's second half lands after the read
            (served_root / "AGENTS.md").write_text("Run the tests first.\n" * 40)
        return found

    (served_root / "AGENTS.md").write_text("")
    with monkeypatch.context() as patched:
        patched.setattr(instructions, "_read", read_then_finished)
        refresh_sets(session.id, served())

    html = client.get(f"/s/{session.id}/").content.decode()

    saved = Session.objects.get(pk=session.pk).context_state["hud"]["instructions"]
    assert [f["tokens"] > 100 for f in saved["files"]] == [True], html
