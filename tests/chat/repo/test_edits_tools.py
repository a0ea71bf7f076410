"""The edit tools as the model calls them: their schema, their results, bad calls, claims."""

from __future__ import annotations

import json

import pytest

from chat.repo import edittools
from chat.repo.edits import disk
from chat.repo.edits.applying import accept, reject
from chat.repo.repomap.builder import RepoMaps
from chat.repo.tools.calls import ToolCall
from chat.repo.watcher import RepositoryWatcher
from history import edits
from history.models import ContentObject, PendingEdit

pytestmark = pytest.mark.django_db


@pytest.fixture
def repo_files():
    return {"src/app.py": "X = 1\nY = 2\n"}


@pytest.fixture
def edits_on(settings):
    settings.ACDC_EDITS = True


def call(session, repo, name: str, arguments) -> object:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return edittools.run_edit_tool(session, ToolCall("c1", name, raw), turn_id="t1", repo=repo)


def test_the_edit_tools_are_offered_only_with_edits_on(settings):
    settings.ACDC_EDITS = False
    assert edittools.with_edit_tools([]) == []
    settings.ACDC_EDITS = True
    names = [spec["function"]["name"] for spec in edittools.with_edit_tools([])]
    assert names == ["edit_file", "write_file"]
    for spec in edittools.EDIT_TOOL_SPECS:
        assert spec["function"]["parameters"]["additionalProperties"] is False
    edit = edittools.EDIT_TOOL_SPECS[0]["function"]["parameters"]
    assert edit["required"] == ["path", "old_text", "new_text"]


def test_a_call_says_what_happened_in_one_line_and_is_recorded(edits_on, session, repo, root):
    result = call(
        session, repo, "edit_file", {"path": "src/app.py", "old_text": "Y = 2", "new_text": "Y = 3"}
    )
    assert result.status == "ok"
    assert result.output == (
        "pending review: src/app.py, +1 −1 (the developer reviews it after your reply; "
        "the file is unchanged until then)"
    )
    toolcall = ContentObject.objects.get(pk=result.object_id)
    assert toolcall.latest_version().content == result.output
    row = PendingEdit.objects.get()
    assert (row.call_id, row.turn_id, row.status) == ("c1", "t1", "pending")
    assert (root / "src" / "app.py").read_text() == "X = 1\nY = 2\n"


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        ("{not json", "not valid JSON"),
        ({"path": "src/app.py"}, "missing argument 'content'"),
        ({"path": "src/app.py", "content": "x", "mode": "w"}, "unexpected argument 'mode'"),
        ({"path": "src/\0app.py", "content": "x"}, "NUL"),
        ({"path": "../escape.py", "content": "x"}, "('..') is not allowed"),
    ],
)
def test_a_bad_call_fails_with_a_reason_and_writes_nothing(
    edits_on, session, repo, root, arguments, reason
):
    result = call(session, repo, "write_file", arguments)
    assert result.status == "fail" and reason in result.output
    assert (root / "src" / "app.py").read_text() == "X = 1\nY = 2\n"
    assert not (root.parent / "escape.py").exists()


def test_rows_another_tab_claimed_are_not_applied_twice(edits_on, session, repo, root):
    call(
        session, repo, "edit_file", {"path": "src/app.py", "old_text": "Y = 2", "new_text": "Y = 3"}
    )
    ids = list(PendingEdit.objects.values_list("pk", flat=True))
    _, theirs = edits.edits_claim(ids)  # the other tab is applying them
    outcome = accept(session, ids, repo=repo)
    assert not outcome.applied and not outcome.lines
    assert (root / "src" / "app.py").read_text() == "X = 1\nY = 2\n"
    assert [row.claim for row in PendingEdit.objects.all()] == [theirs[0].claim]


def test_the_watcher_ignores_an_edits_temporary_file(repo, root):
    temporary = root / "src" / f".app.py.x1{disk.TEMP_SUFFIX}"
    temporary.write_text("half")
    watcher = RepositoryWatcher(repo, None, maps=RepoMaps(), own_writes=repo.own_writes)
    assert watcher.relevant([str(temporary)]) == []


def test_a_rejected_edit_is_never_applied_afterwards(edits_on, session, repo, root):
    call(session, repo, "write_file", {"path": "src/app.py", "content": "gone\n"})
    ids = list(PendingEdit.objects.values_list("pk", flat=True))
    assert [row.result for row in reject(ids)] == ["rejected: src/app.py"]
    assert not accept(session, ids, repo=repo).lines
    assert (root / "src" / "app.py").read_text() == "X = 1\nY = 2\n"
    assert PendingEdit.objects.get().status == PendingEdit.Status.REJECTED


def test_only_the_chosen_hunks_of_a_files_edits_are_written(edits_on, session, repo, root):
    text = "".join(f"line {n}\n" for n in range(20))
    (root / "src" / "app.py").write_text(text)
    for old, new in (("line 1\n", "line one\n"), ("line 18\n", "line eighteen\n")):
        call(session, repo, "edit_file", {"path": "src/app.py", "old_text": old, "new_text": new})
    ids = list(PendingEdit.objects.values_list("pk", flat=True))
    outcome = accept(session, ids, repo=repo, hunks={1})
    assert (root / "src" / "app.py").read_text() == text.replace("line 18\n", "line eighteen\n")
    assert outcome.lines == ["applied: src/app.py v1→v2, +1 −1, 1 of 2 hunks"] * 2
    assert accept(session, ids, repo=repo).lines == []  # applied once, as chosen
