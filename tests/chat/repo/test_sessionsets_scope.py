"""Object ids resolve only within their own session: another session's tool output or
file object cannot be activated, pinned or deactivated by id, and its text never leaks."""

from __future__ import annotations

import json

import pytest

from chat.repo import sessionsets
from chat.repo.indexing import record_toolcall
from chat.repo.repomap.builder import RepoMaps
from chat.repo.sessionsets import SetsError
from chat.repo.tools.calls import ToolCall
from chat.repo.tools.context_tools import run_tool
from history import services
from history.models import SessionObject

pytestmark = pytest.mark.django_db
SECRET_OUTPUT = "session one's private tool output"


@pytest.fixture
def other(session, repo):
    """A second session whose tool call and file the first one must not reach by id."""
    second = services.session_create(repository=session.repository, model="acdc/fake")
    call = record_toolcall(
        session=second, call_id="c1", tool="grep", args={}, status="ok", output=SECRET_OUTPUT
    )
    return second, call.object.id


@pytest.mark.parametrize("tool", ["activate", "pin", "deactivate", "unpin"])
def test_a_tool_call_id_of_another_session_is_no_such_object_here(session, repo, other, tool):
    _, foreign_id = other
    result = run_tool(
        session, ToolCall("c9", tool, json.dumps({"id": foreign_id})), repo, maps=RepoMaps()
    )
    assert result.status == "fail"
    assert f"{foreign_id}: no such object in this session" in result.output
    assert SECRET_OUTPUT not in result.output
    assert not SessionObject.objects.filter(session=session, object_id=foreign_id).exists()


@pytest.mark.parametrize("change", [sessionsets.activate, sessionsets.pin])
def test_a_file_object_id_of_another_session_is_refused_but_its_path_works(
    session, repo, other, change
):
    second, _ = other
    foreign = sessionsets.activate(second, "README.md", repo=repo)
    with pytest.raises(SetsError, match="no such object in this session"):
        change(session, foreign.object_id, repo=repo)
    assert change(session, "README.md", repo=repo).object_id == foreign.object_id


def test_an_id_of_this_session_still_resolves(session, repo):
    own = record_toolcall(
        session=session, call_id="c1", tool="grep", args={}, status="ok", output="mine"
    )
    result = run_tool(
        session,
        ToolCall("c2", "activate", json.dumps({"id": own.object.id})),
        repo,
        maps=RepoMaps(),
    )
    assert result.status == "ok" and "mine" in result.output


def test_a_file_named_like_an_object_id_is_still_found_by_its_path(session, repo, root):
    name = "ab" * 32
    (root / name).write_text("content-addressed\n")
    assert sessionsets.activate(session, name, repo=repo).content == "content-addressed\n"
