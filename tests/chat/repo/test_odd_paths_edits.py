"""Odd file names through the model's edit tools, the person's Accept and Undo, and Commit.

The model (`acdc/fake`, scripted) calls `edit_file` or `write_file` on an odd name in a
real turn; the pending edit names exactly that file, Accept changes exactly that file in
the whole work tree, Undo gives the same bytes back, and Commit commits exactly that file
(git reads the name as itself, never as a pattern or an option). A secret-shaped twin in
the same odd folder is refused without a byte of it reaching the model, and a path segment
longer than a file system takes fails the call and writes nothing.
"""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync
from django.conf import settings
from django.test import Client
from django.utils.html import escape

from chat.live.served import served
from chat.llm.fake import FakeStep
from chat.repo.edits.applying import accept_reply
from chat.repo.edits.commit import changed_paths, commit
from chat.repo.edits.commit_message import MAX_SUBJECT
from chat.repo.edits.proposing import QUEUED
from chat.repo.edits.undo import undo
from chat.turn.after_turn import after_turn_tasks
from chat.turn.turns import TurnInput, TurnServices, run_turn
from chat.web.edits.commit_view import commit_context
from contextcore.paths import shown
from history import services
from history.models import Message, PendingEdit
from tests import serving
from tests.chat.repo.git_support import commit_everything, git
from tests.chat.repo.odd_support import ALL_ODD, SECRET, TOO_LONG, tree

pytestmark = pytest.mark.django_db(transaction=True)
KINDS = list(ALL_ODD)
BODY = "def marker():\n    return 'MARKER'\n"


def proposed_message(session, *, repo):
    """The message the commit form proposes (chat.web.edits.commit_view)."""
    return commit_context(session, repo)["commit_message"]


@pytest.fixture
def repo_files():
    files: dict[str, str | bytes] = {"README.md": "# Odd names\n"}
    for ordinary, secret in ALL_ODD.values():
        files[ordinary] = BODY
        files[secret] = f"MARKER {SECRET}\n"
    return files


@pytest.fixture
def repo_is_git():
    return True


@pytest.fixture
def committed(served_root, settings):
    """The odd repository committed as it is, with the edit tools on."""
    settings.ACDC_EDITS = True
    commit_everything(served_root)
    return served_root


async def _ignore(event) -> None:
    pass


async def _after(ctx) -> None:
    await after_turn_tasks(ctx, _ignore, start_delay=0)


def model_turn(fake, *calls: dict, session=None, reply: str = "Done.") -> tuple:
    """A turn (of a new session unless given one) in which the model makes `calls` and
    then says it is done, ended by the after-turn routine as the page's turns are; returns
    the session and its answer."""
    if session is None:
        session = services.session_create(repository=str(settings.ACDC_REPO), model="acdc/fake")
    for n, call in enumerate(calls):
        call["id"] = f"e{n}"
    steps = [FakeStep(tool_calls=list(calls))] if calls else []
    fake.enqueue(*steps, FakeStep(text=reply))
    async_to_sync(run_turn)(
        TurnInput(session_id=session.id, user_text="Change it.", model="acdc/fake"),
        TurnServices(emit=_ignore, wiring=served(), after=_after),
    )
    answer = Message.objects.filter(session=session, role="assistant").latest("seq")
    return session, answer


def edit_call(path: str) -> dict:
    args = {"path": path, "old_text": "'MARKER'", "new_text": "'EDITED'"}
    return {"name": "edit_file", "arguments": args}


def write_call(path: str, content: str) -> dict:
    return {"name": "write_file", "arguments": {"path": path, "content": content}}


def told_the_model(fake, request: int = 1) -> list[str]:
    """What the tool results said to the model, in the request after its calls (or in
    request number `request`)."""
    return [m["content"] for m in fake.requests[request].messages if m["role"] == "tool"]


@pytest.mark.parametrize("kind", KINDS)
def test_an_edit_of_the_odd_name_changes_exactly_it_and_undo_gives_its_bytes_back(
    fake, committed, kind
):
    ordinary, _ = ALL_ODD[kind]
    before = tree(committed)
    session, answer = model_turn(fake, edit_call(ordinary))

    [row] = PendingEdit.objects.filter(session=session)
    assert (row.path, row.status, row.message_id) == (ordinary, "pending", answer.pk)
    assert tree(committed) == before  # nothing is written before the person accepts
    repo = serving.repository()

    assert accept_reply(session, answer, repo=repo).applied
    edited = before[ordinary].replace(b"'MARKER'", b"'EDITED'")
    assert tree(committed) == {**before, ordinary: edited}

    assert undo(session, answer, repo=repo).applied
    assert tree(committed) == before


@pytest.mark.parametrize("kind", KINDS)
def test_the_cards_accept_and_undo_of_one_odd_file_touch_only_it(fake, committed, kind):
    ordinary, _ = ALL_ODD[kind]
    other = next(o for k, (o, _) in ALL_ODD.items() if k != kind)
    before = tree(committed)
    _, answer = model_turn(fake, edit_call(ordinary), edit_call(other))
    url = f"/m/{answer.id}/edits/"

    assert Client().post(url, {"op": "accept", "path": ordinary}).status_code == 204

    edited = before[ordinary].replace(b"'MARKER'", b"'EDITED'")
    assert tree(committed) == {**before, ordinary: edited}
    statuses = dict(PendingEdit.objects.values_list("path", "status"))
    assert statuses == {ordinary: "applied", other: "pending"}
    assert Client().post(url, {"op": "undo", "path": ordinary}).status_code == 204
    assert tree(committed) == before


@pytest.mark.parametrize("kind", KINDS)
def test_a_new_file_beside_the_odd_name_is_exactly_what_accept_creates(fake, committed, kind):
    ordinary, _ = ALL_ODD[kind]
    new = ordinary.removesuffix(".py") + "_2.py"
    before = tree(committed)
    session, answer = model_turn(fake, write_call(new, "NEW = 1\n"))

    [row] = PendingEdit.objects.filter(session=session)
    assert (row.path, row.kind, row.status) == (new, "create", "pending")
    repo = serving.repository()
    assert accept_reply(session, answer, repo=repo).applied
    assert tree(committed) == {**before, new: b"NEW = 1\n"}

    assert undo(session, answer, repo=repo).applied
    assert tree(committed) == before


@pytest.mark.parametrize("kind", KINDS)
def test_a_reply_block_naming_the_odd_file_as_a_json_string_edits_exactly_it(fake, committed, kind):
    ordinary, _ = ALL_ODD[kind]
    named = json.dumps(ordinary, ensure_ascii=False)  # how the tools write an odd name
    block = "<<<<<<< SEARCH\n    return 'MARKER'\n=======\n    return 'EDITED'\n>>>>>>> REPLACE"
    before = tree(committed)
    session, answer = model_turn(fake, reply=f"Here.\n\n{named}\n```python\n{block}\n```\n")

    [row] = PendingEdit.objects.filter(session=session)
    assert (row.path, row.status, row.message_id) == (ordinary, "pending", answer.pk)
    assert accept_reply(session, answer, repo=serving.repository()).applied
    edited = before[ordinary].replace(b"'MARKER'", b"'EDITED'")
    assert tree(committed) == {**before, ordinary: edited}


@pytest.mark.parametrize("kind", KINDS)
def test_the_secret_twin_of_the_odd_name_is_refused_to_both_edit_tools(fake, committed, kind):
    _, secret = ALL_ODD[kind]
    before = tree(committed)
    session, _ = model_turn(fake, edit_call(secret), write_call(secret, "TOKEN=mine\n"))

    said = told_the_model(fake)
    assert len(said) == 2 and all("failed" in text for text in said), said
    assert all(": this file looks like a secret" in text for text in said)
    assert SECRET not in json.dumps(fake.requests[1].messages)
    assert not PendingEdit.objects.filter(session=session, status="pending").exists()
    assert not PendingEdit.objects.filter(session=session).exclude(new_text="").exists()
    assert tree(committed) == before


def test_a_path_segment_longer_than_the_file_system_takes_fails_the_call(fake, committed):
    before = tree(committed)
    session, answer = model_turn(fake, write_call(TOO_LONG, "X = 1\n"))

    [said] = told_the_model(fake)
    assert said.startswith("Edit 1 of 1, ") and said.endswith(
        ": cannot be read (File name too long)\nNo edit of this batch applied."
    )
    assert not PendingEdit.objects.filter(session=session, status="pending").exists()
    assert answer.content == "Done." and tree(committed) == before


@pytest.mark.parametrize("kind", KINDS)
def test_every_line_the_model_is_told_of_its_edit_names_the_odd_file_as_the_tools_do(
    fake, committed, kind
):
    ordinary, _ = ALL_ODD[kind]
    name = shown(ordinary)
    session, answer = model_turn(fake, edit_call(ordinary))
    assert told_the_model(fake) == [f"pending review: {name}, +1 −1 ({QUEUED})"]
    repo = serving.repository()
    assert accept_reply(session, answer, repo=repo).applied
    assert undo(session, answer, repo=repo).applied

    miss = {"name": "edit_file", "arguments": {"path": ordinary, "old_text": "NO", "new_text": "x"}}
    model_turn(fake, miss, session=session)

    update = next(m["content"] for m in fake.requests[-1].messages if is_update(m))
    reviews = [line for line in update.splitlines() if line.startswith(("applied", "undone"))]
    assert reviews == [f"applied: {name} v1→v2, +1 −1", f"undone: {name} v2→v3"]
    failed = told_the_model(fake, -1)[-1]
    assert failed.startswith(f"Edit 1 of 1, {name} (edit_file), failed: ")
    assert f"not found in {name}, neither" in failed


def is_update(message: dict) -> bool:
    """The closing "Context update" message, where the review of the edits reaches the model."""
    content = message.get("content")
    return isinstance(content, str) and content.startswith("# Context update")


def committed_paths(root) -> list[str]:
    listed = git(root, "show", "--name-only", "-z", "--format=", "HEAD")
    return [p for p in listed.split("\0") if p]


@pytest.mark.parametrize("kind", KINDS)
def test_committing_the_accepted_odd_file_commits_exactly_it(fake, committed, kind):
    ordinary, secret = ALL_ODD[kind]
    (committed / "README.md").write_text("the person's\n")  # theirs, not acdc's
    (committed / secret).write_text(f"MARKER {SECRET} changed\n")
    (committed / "draft.py").write_text("untracked\n")
    session, answer = model_turn(fake, edit_call(ordinary))
    repo = serving.repository()
    assert accept_reply(session, answer, repo=repo).applied
    assert changed_paths(session, repo=repo) == [ordinary]

    done = commit(session, "Edit the odd file", repo=repo)

    assert done.paths == [ordinary] and committed_paths(committed) == [ordinary]
    shown = git(committed, "show", "HEAD:" + ordinary)
    assert shown == BODY.replace("'MARKER'", "'EDITED'")
    left = git(committed, "status", "--porcelain", "-z").split("\0")
    assert set(left) - {""} == {" M README.md", f" M {secret}", "?? draft.py"}


@pytest.mark.parametrize("kind", KINDS)
def test_committing_a_new_odd_file_commits_exactly_it(fake, committed, kind):
    ordinary, _ = ALL_ODD[kind]
    new = ordinary.removesuffix(".py") + "_2.py"
    (committed / ordinary).write_text("the person's own change\n")
    session, answer = model_turn(fake, write_call(new, "NEW = 1\n"))
    repo = serving.repository()
    assert accept_reply(session, answer, repo=repo).applied

    assert commit(session, "Add a file", repo=repo).paths == [new]

    assert committed_paths(committed) == [new]
    left = git(committed, "status", "--porcelain", "-z").split("\0")
    assert set(left) - {""} == {f" M {ordinary}"}


# A subject is one line, and a space at a name's edge would be lost in it; other odd names
# read well as they are.
QUOTED_IN_A_SUBJECT = {"newline": '"new\\nline.py"', "edge spaces": '" edge .py"'}


@pytest.mark.parametrize("kind", KINDS)
def test_the_proposed_commit_message_names_the_odd_file_on_one_line(fake, committed, kind):
    ordinary, _ = ALL_ODD[kind]
    session, answer = model_turn(fake, edit_call(ordinary))  # "Done." says nothing to reuse
    repo = serving.repository()
    assert accept_reply(session, answer, repo=repo).applied

    proposed = proposed_message(session, repo=repo)

    named = QUOTED_IN_A_SUBJECT.get(kind, ordinary)
    whole = f"Update {named}"
    assert proposed == (whole if len(whole) <= MAX_SUBJECT else "Update 1 file")
    commit(session, proposed, repo=repo)
    assert git(committed, "log", "-1", "--format=%B") == proposed + "\n\n"


@pytest.mark.parametrize("kind", KINDS)
def test_the_commit_form_names_the_odd_file_and_commits_exactly_it(fake, committed, kind):
    ordinary, secret = ALL_ODD[kind]
    session, answer = model_turn(fake, edit_call(ordinary))
    assert accept_reply(session, answer, repo=serving.repository()).applied
    (committed / secret).write_text(f"MARKER {SECRET} changed\n")  # the person's
    url = f"/s/{session.id}/commit/"

    html = Client().get(url).content.decode()

    assert html.count(f"<code>{escape(ordinary)}</code>") == 1 and SECRET not in html
    assert escape(secret) not in html
    answer = Client().post(url, {"message": "From the page"}).content.decode()
    assert "Committed 1 file(s)" in answer
    assert committed_paths(committed) == [ordinary]
    assert git(committed, "status", "--porcelain", "-z") == f" M {secret}\0"
