"""The optional Commit of the files acdc changed, in a real git repository: only acdc's
files go into the commit (never one the person changed or staged), with the message the
person gives; the page's form proposes one from the turn and is CSRF-protected."""

from __future__ import annotations

import subprocess

import pytest
from channels.db import database_sync_to_async
from django.test import Client, override_settings

from chat.repo import sessionsets
from chat.repo.edits.applying import propose
from chat.repo.edits.commit import (
    CommitRefused,
    HooksNeedConsent,
    changed_paths,
    commit,
)
from chat.repo.edits.commit_message import files_line, reply_summary, summary_line
from chat.web.edits.commit_view import commit_context
from contextcore.edits import EditOp
from history import services
from history.models import Message
from tests import serving
from tests.chat.repo.edits_support import written
from tests.chat.repo.git_support import commit_everything, git
from tests.chat.sockets import connect, frames_until

pytestmark = pytest.mark.django_db


def proposed_message(session, *, repo):
    """The message the commit form proposes (chat.web.edits.commit_view)."""
    return commit_context(session, repo)["commit_message"]


@pytest.fixture
def repo_files():
    return {"src/app.py": "A = 1\n", "src/other.py": "B = 1\n"}


@pytest.fixture
def repo_is_git():
    return True


@pytest.fixture
def committed(served_root, settings):
    settings.ACDC_EDITS = True
    commit_everything(served_root)
    return served_root


@pytest.fixture
def edited(committed):
    """A turn whose edits change src/app.py and create src/new.py; the person changes and
    stages src/other.py themselves."""
    session = services.session_create(repository=str(committed), model="acdc/fake")
    session.auto_apply = True
    session.save(update_fields=["auto_apply"])
    services.message_append(
        session=session, role="user", content="  Bump A and add B\nplease, thanks", turn_id="t1"
    )
    said = services.message_append(session=session, role="assistant", content="ok", turn_id="t1")
    ops = [
        EditOp("src/app.py", "replace", "A = 1", "A = 2"),
        EditOp("src/new.py", "create", new_text="N = 1\n"),
    ]
    # the turn's rows carry its id, as the turn's own proposing does
    assert written(session, ops, repo=serving.repository(), message=said, turn_id="t1").applied
    (committed / "src" / "other.py").write_text("B = 2\n")
    git(committed, "add", "src/other.py")
    return session


def test_it_commits_only_the_files_acdc_changed_with_the_persons_message(edited, committed):
    repo = serving.repository()
    assert changed_paths(edited, repo=repo) == ["src/app.py", "src/new.py"]
    assert proposed_message(edited, repo=repo) == "Update src/app.py, add src/new.py"

    done = commit(edited, "Bump A, add new.py", repo=repo)

    assert done.paths == ["src/app.py", "src/new.py"] and done.summary.endswith(
        "Bump A, add new.py"
    )
    shown = git(committed, "show", "--name-only", "--format=%s", "HEAD").split()
    assert shown == ["Bump", "A,", "add", "new.py", "src/app.py", "src/new.py"]
    assert git(committed, "status", "--porcelain") == "M  src/other.py\n"  # still the person's
    with pytest.raises(CommitRefused, match="no files"):
        commit(edited, "again", repo=repo)


def test_nothing_is_committed_without_a_message_or_without_edits(committed):
    session = services.session_create(repository=str(committed), model="acdc/fake")
    repo = serving.repository()
    with pytest.raises(CommitRefused, match="message"):
        commit(session, "  ", repo=repo)
    with pytest.raises(CommitRefused, match="no files"):
        commit(session, "nothing", repo=repo)
    assert git(committed, "log", "--format=%s") == "start\n"


def test_the_page_form_proposes_a_message_and_commits_on_the_persons_press(edited, committed):
    strict = Client(enforce_csrf_checks=True)
    url = f"/s/{edited.id}/commit/"
    page = strict.get(url)
    html = page.content.decode()
    assert '<label for="commit-message-' in html and "Describe the commit</label>" in html
    assert (
        'value="Update src/app.py, add src/new.py"' in html
        and ">Commit changed files</button>" in html
    )
    assert "<code>src/app.py</code>" in html and "src/other.py" not in html
    assert git(committed, "log", "--format=%s") == "start\n"  # drawing it commits nothing
    assert strict.post(url, {"message": "x"}).status_code == 403  # no CSRF token

    token = page.cookies["csrftoken"].value
    answer = strict.post(url, {"message": "From the page", "csrfmiddlewaretoken": token})
    assert answer.status_code == 200 and "Committed 2 file(s)" in answer.content.decode()
    assert git(committed, "log", "-1", "--format=%s") == "From the page\n"
    tools = Client().get(f"/s/{edited.id}/tools/").content.decode()
    assert f'hx-get="/s/{edited.id}/commit/"' in tools


def test_the_page_shows_no_commit_form_while_acdc_changed_nothing(committed):
    session = services.session_create(repository=str(committed), model="acdc/fake")
    html = Client().get(f"/s/{session.id}/commit/").content.decode()
    assert 'id="edit-commit"' in html  # the place stays, for a later note
    assert "Commit changed files" not in html and "Describe the commit" not in html


def acdc_writes(root, *ops: EditOp, turn: str = "t2", reply: str = "Done."):
    """A session whose turn `turn` proposed `ops` and the person accepted them."""
    session = services.session_create(repository=str(root), model="acdc/fake")
    services.message_append(session=session, role="user", content="[sr] do it", turn_id=turn)
    said = services.message_append(session=session, role="assistant", content=reply, turn_id=turn)
    outcome = written(session, list(ops), repo=serving.repository(), message=said, turn_id=turn)
    assert outcome.applied, outcome
    return session


def committed_paths(root) -> list[str]:
    listed = git(root, "show", "--name-only", "-z", "--format=", "HEAD")
    return sorted(p for p in listed.split("\0") if p.strip())


def test_a_file_named_like_pathspec_magic_is_committed_as_itself_only(committed):
    (committed / "src" / "other.py").write_text("B = 2\n")  # the person's unstaged edit
    (committed / "draft.md").write_text("private\n")  # the person's untracked draft
    (committed / "src" / "app.py").write_text("A = 5\n")
    git(committed, "add", "src/app.py")  # the person's own staged change
    session = acdc_writes(committed, EditOp(":(glob)**", "create", new_text="magic\n"))

    assert changed_paths(session, repo=serving.repository()) == [":(glob)**"]
    done = commit(session, "Add the file", repo=serving.repository())

    assert done.paths == [":(glob)**"] and committed_paths(committed) == [":(glob)**"]
    status = git(committed, "status", "--porcelain", "-z").split("\0")
    assert set(status) - {""} == {"?? draft.md", "M  src/app.py", " M src/other.py"}


@pytest.mark.parametrize("name", ["*", "-rf", "src/*.py", ":!src/new.py"])
def test_a_file_named_like_a_pattern_or_an_option_commits_nothing_else(committed, name):
    (committed / "README.md").write_text("# Readme\n")
    git(committed, "add", "README.md")
    git(committed, "commit", "-qm", "readme")
    (committed / "README.md").write_text("the person's\n")
    (committed / "src" / "other.py").write_text("B = 3\n")
    session = acdc_writes(committed, EditOp(name, "create", new_text="odd\n"))

    commit(session, "Odd name", repo=serving.repository())

    assert committed_paths(committed) == [name]
    assert git(committed, "diff", "--name-only") == "README.md\nsrc/other.py\n"  # still theirs
    assert git(committed, "diff", "--cached", "--name-only") == ""


HOOK_ADDS_README = "#!/bin/sh\ngit add README.md\n"


def test_a_commit_holding_more_than_acdcs_files_is_undone_and_says_so(committed):
    hook = committed / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(HOOK_ADDS_README)  # the person's own hook, which stages more
    hook.chmod(0o755)
    (committed / "README.md").write_text("the person's\n")  # untracked: git add stages it
    (committed / "src" / "other.py").write_text("B = 2\n")
    git(committed, "add", "src/other.py")  # the person's staged change
    session = acdc_writes(committed, EditOp("src/app.py", "replace", "A = 1", "A = 2"))

    with pytest.raises(CommitRefused, match=r"undone.*README\.md"):
        commit(session, "Bump A", repo=serving.repository())

    assert git(committed, "log", "--format=%s") == "start\n"
    status = git(committed, "status", "--porcelain")
    assert status == " M src/app.py\nM  src/other.py\n?? README.md\n"  # as before the press


def test_the_first_commit_of_a_repository_holds_only_acdcs_files(root, settings):
    settings.ACDC_EDITS = True
    for setting in (("user.email", "dev@example.com"), ("user.name", "Dev")):
        git(root, "config", *setting)
    git(root, "add", "src/other.py")  # staged by the person in a repository with no commit
    with override_settings(ACDC_REPO=root):
        session = acdc_writes(root, EditOp("src/app.py", "replace", "A = 1", "A = 2"))
        commit(session, "First", repo=serving.repository())

    assert committed_paths(root) == ["src/app.py"]
    assert git(root, "status", "--porcelain", "--", "src/other.py") == "A  src/other.py\n"


def test_a_first_commit_holding_more_is_undone_and_leaves_no_commit(root, settings):
    settings.ACDC_EDITS = True
    for setting in (("user.email", "dev@example.com"), ("user.name", "Dev")):
        git(root, "config", *setting)
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\ngit add src/other.py\n")
    hook.chmod(0o755)
    with override_settings(ACDC_REPO=root):
        session = acdc_writes(root, EditOp("src/app.py", "replace", "A = 1", "A = 2"))
        with pytest.raises(CommitRefused, match="undone"):
            commit(session, "First", repo=serving.repository())

    assert subprocess.run(["git", "-C", str(root), "rev-parse", "-q", "--verify", "HEAD"],
                          capture_output=True).returncode != 0  # fmt: skip
    assert git(root, "status", "--porcelain") == "?? src/\n"


@pytest.fixture
def hooked(committed):
    """A repository whose `core.hooksPath=.githooks` holds an executable pre-commit, which
    acdc's accepted edit changed to leave a marker file when it runs."""
    hook = committed / ".githooks" / "pre-commit"
    hook.parent.mkdir()
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(0o755)
    git(committed, "config", "core.hooksPath", ".githooks")
    git(committed, "add", ".githooks/pre-commit")
    git(committed, "commit", "-qm", "hooks")
    change = EditOp(".githooks/pre-commit", "replace", "exit 0", "touch hook-ran")
    return acdc_writes(committed, change, EditOp("src/app.py", "replace", "A = 1", "A = 2"))


def test_a_hook_acdc_changed_does_not_run_without_the_persons_word(hooked, committed):
    repo = serving.repository()
    with pytest.raises(HooksNeedConsent, match=r"\.githooks/pre-commit, which git would run"):
        commit(hooked, "Bump A", repo=repo)
    assert not (committed / "hook-ran").exists()
    assert git(committed, "log", "-1", "--format=%s") == "hooks\n"

    done = commit(hooked, "Bump A", repo=repo, hooks="skip")

    assert not (committed / "hook-ran").exists()
    assert done.paths == [".githooks/pre-commit", "src/app.py"]
    assert git(committed, "log", "-1", "--format=%s") == "Bump A\n"


def test_a_hook_acdc_changed_runs_when_the_person_says_so(hooked, committed):
    commit(hooked, "Bump A", repo=serving.repository(), hooks="run")
    assert (committed / "hook-ran").exists()


def test_the_page_names_the_changed_hook_and_asks_which_way(hooked, committed):
    url = f"/s/{hooked.id}/commit/"
    html = Client().get(url).content.decode()
    assert "<code>.githooks/pre-commit</code>, which git runs when you commit" in html
    assert ">Commit and run the changed hook</button>" in html
    assert ">Commit without hooks</button>" in html and "Commit changed files" not in html

    answer = Client().post(url, {"message": "Bump A"}).content.decode()  # a form drawn before
    assert "which git would run on this commit" in answer and 'role="alert"' in answer
    assert git(committed, "log", "-1", "--format=%s") == "hooks\n"

    answer = Client().post(url, {"message": "Bump A", "hooks": "skip"}).content.decode()
    assert "Committed 2 file(s) (no hook ran)" in answer
    assert not (committed / "hook-ran").exists()


def test_the_proposal_is_the_replys_summary_line_never_the_persons_chat_line(committed):
    reply = (
        "Sure! I'll raise **the limit** to 2 so the test passes.\n\n"
        "src/app.py\n```python\n<<<<<<< SEARCH\nA = 1\n=======\nA = 2\n>>>>>>> REPLACE\n```\n"
    )
    session = acdc_writes(committed, EditOp("src/app.py", "replace", "A = 1", "A = 2"), reply=reply)
    proposed = proposed_message(session, repo=serving.repository())
    assert proposed == "Raise the limit to 2 so the test passes"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("## Retry the fetch on timeouts\n\nDetails follow.", "Retry the fetch on timeouts"),
        ("Here is the change:\n\n- Rename `run` to `start` everywhere", "Rename `run` to `start`"
         " everywhere"),
        ("```py\nprint('a long code line here')\n```\nok", ""),
        ("Done.", ""),
        ("Let me fix the off-by-one in the pager. Then more.", "Fix the off-by-one in the pager"),
    ],
)  # fmt: skip
def test_the_summary_line_is_the_first_sentence_that_describes(text, expected):
    assert summary_line(text) == expected


def test_without_a_summary_the_proposal_names_the_files_or_counts_them():
    assert files_line({"a.py": "changed", "b.py": "added", "c.py": "removed"}) == (
        "Update a.py, add b.py, remove c.py"
    )
    deep = {f"src/pkg/very/deep/module_{n}.py": "changed" for n in range(3)}
    assert files_line(deep) == "Update module_0.py, module_1.py, module_2.py"
    many = {f"src/pkg/module_{n}.py": "added" for n in range(12)}
    assert files_line(many) == "Add 12 files"


# A reply that called tools: a read, its talk about the result, the edit, then its summary.
OPENING, TALK = "", "A tool result of 1 lines; it starts with A = 1…\n\n"
SUMMARY = "Raised the limit to 2 so the test passes."


def reply_with_tool_calls(root) -> Message:
    """A reply whose edit (pending) the model made through tools, its text cut by them."""
    session = services.session_create(repository=str(root), model="acdc/fake")
    services.message_append(session=session, role="user", content="[sr] fix it", turn_id="t1")
    for tool, at in (("read_file", len(OPENING)), ("edit_file", len(OPENING + TALK))):
        services.message_append(
            session=session, role="tool", content="1 | A = 1", turn_id="t1",
            edit_results=[{"tool": tool, "status": "ok", "at": at}],
        )  # fmt: skip
    reply = services.message_append(
        session=session, role="assistant", content=OPENING + TALK + SUMMARY, turn_id="t1"
    )
    sessionsets.activate(
        session, "src/app.py", repo=serving.repository()
    )  # the model read the file it edits
    op = EditOp("src/app.py", "replace", "A = 1", "A = 2")
    propose(session, [op], repo=serving.repository(), turn_id="t1", message=reply)
    return reply


def press(reply: Message, op: str) -> None:
    answer = Client().post(f"/m/{reply.id}/edits/", {"op": op, "path": "src/app.py"})
    assert answer.status_code == 204, answer.content


@pytest.mark.django_db(transaction=True)
async def test_accept_and_apply_again_bring_the_commit_form_to_every_tab(committed):
    reply = await database_sync_to_async(reply_with_tool_calls)(committed)
    tab = await connect(reply.session_id)
    try:
        for op, form_shown in (("accept", True), ("undo", False), ("reapply", True)):
            await database_sync_to_async(press)(reply, op)
            frame = (await frames_until(tab, 'id="edit-commit"'))[-1]
            form = frame[frame.index('<section id="edit-commit"') :]
            assert 'hx-swap-oob="outerHTML"' in form.split(">", 1)[0], op
            assert ("Commit changed files" in form) is form_shown, (op, form)
        # The subject is the reply's own summary, never its talk about a tool's result.
        assert f'value="{SUMMARY.rstrip(".")}"' in form, form
    finally:
        await tab.disconnect()


FINAL = "The tool output says A = 1. Raise it to 2 now."
BETWEEN = "It holds the limit in one place.\n\n"


@pytest.mark.parametrize(
    ("text", "cuts", "expected"),
    [
        ("Bump the limit to two.\n\n" + TALK, [24, 24 + len(TALK)], "Bump the limit to two"),
        (TALK + FINAL, [0, len(TALK)], "Raise it to 2 now"),
        (TALK + BETWEEN + TALK, [0, len(TALK), len(TALK + BETWEEN)], ""),
    ],
)
def test_a_reply_with_tool_calls_gives_its_summary_or_opening_never_the_talk_between(
    text, cuts, expected
):
    assert reply_summary(text, cuts) == expected
