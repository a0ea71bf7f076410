"""What counts as secret cannot be loosened by a file the model writes: `.acdcignore` only
adds to the built-in patterns, a session keeps the ignore texts its turns started with, and
a secret stays in a session only by the person's confirmation, not by being active."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from chat.repo import sessionsets
from chat.repo.edits.proposing import propose
from chat.repo.edits.replies import after_reply
from chat.repo.repomap.builder import RepoMaps
from chat.repo.tools.calls import ToolCall
from chat.repo.tools.context_tools import run_tool
from contextcore.edits import EditOp
from history import services
from history.models import Message
from tests import serving

pytestmark = pytest.mark.django_db
PASSWORD = "correct horse battery staple"


@pytest.fixture
def repo_files():
    return {
        ".env": f"DB_PASSWORD={PASSWORD}\n",
        ".acdcignore": "config/prod.yaml\n",
        "config/prod.yaml": f"password: {PASSWORD}\n",
        "app.py": "A = 1\n",
    }


@pytest.fixture
def edits_on(settings, served_root):
    settings.ACDC_EDITS = True
    return served_root


def read(session, path: str) -> str:
    return run_tool(
        session,
        ToolCall("c-read", "read_file", json.dumps({"path": path})),
        serving.repository(session),
        maps=RepoMaps(),
    ).output


def accepted_write(session, path: str, content: str) -> None:
    """The model writes `path`; the person reads the card and accepts it."""
    repo = serving.repository(session)
    op = EditOp(path, "create", new_text=content, overwrite=True)
    propose(session, [op], repo=repo, turn_id="t1")
    services.message_append(session=session, role="user", content="go", turn_id="t1")
    message = services.message_append(
        session=session, role=Message.Role.ASSISTANT, content="Done.", turn_id="t1"
    )
    after_reply(session, message, repo=repo)
    response = Client().post(f"/m/{message.id}/edits/", {"op": "accept"})
    assert response.status_code == 204
    assert message.edits.get().status == "applied"


def turn_starts(session) -> None:
    sessionsets.hold_secret_floor(session.id, serving.repository().root)
    session.refresh_from_db()


def test_an_acdcignore_the_model_wrote_does_not_unlock_dot_env(edits_on):
    session = services.session_create(repository="", model="acdc/fake")
    turn_starts(session)
    accepted_write(session, ".acdcignore", "*.log\n!.env\n")
    turn_starts(session)
    said = read(session, ".env")
    assert "secret" in said and PASSWORD not in said
    fresh = services.session_create(repository="", model="acdc/fake")
    assert PASSWORD not in read(fresh, ".env")  # no session: the built-in patterns hold


def test_a_pattern_the_model_removed_stays_secret_in_its_session(edits_on):
    session = services.session_create(repository="", model="acdc/fake")
    turn_starts(session)
    accepted_write(session, ".acdcignore", "*.log\n")  # drops config/prod.yaml
    turn_starts(session)
    assert PASSWORD not in read(session, "config/prod.yaml")
    fresh = services.session_create(repository="", model="acdc/fake")
    turn_starts(fresh)  # a new session takes the file as the person accepted it
    assert PASSWORD in read(fresh, "config/prod.yaml")


def test_an_active_secret_is_not_taken_as_confirmed(edits_on):
    session = services.session_create(repository="", model="acdc/fake")
    (edits_on / ".acdcignore").write_text("")
    assert PASSWORD in read(session, "config/prod.yaml")  # not secret yet: read, active
    (edits_on / ".acdcignore").write_text("config/prod.yaml\n")  # the person tightens
    guard = sessionsets.file_guard(session.id, serving.repository())
    assert "secret" in guard("config/prod.yaml")
    assert not sessionsets.confirmed_secret(
        session.id, "config/prod.yaml", repo=serving.repository()
    )
    sessionsets.activate(
        session, "config/prod.yaml", allow_secret=True, repo=serving.repository()
    )  # their own word
    assert sessionsets.confirmed_secret(session.id, "config/prod.yaml", repo=serving.repository())
    assert sessionsets.file_guard(session.id, serving.repository())("config/prod.yaml") == ""
