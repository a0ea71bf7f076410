"""The optional Commit of the files acdc changed, in a real git repository: only acdc's
files go into the commit (never one the person changed or staged), with the message the
person gives; the page's form proposes one from the turn and is CSRF-protected."""

from __future__ import annotations

import subprocess

import pytest
from django.test import Client

from chat.repo import sessionsets
from chat.repo.edits.applying import propose
from chat.repo.edits.commit import CommitRefused, changed_paths, commit, proposed_message
from contextcore.edits import EditOp
from history import services

pytestmark = pytest.mark.django_db


@pytest.fixture
def repo_files():
    return {"src/app.py": "A = 1\n", "src/other.py": "B = 1\n"}


@pytest.fixture
def repo_is_git():
    return True


def git(root, *args: str) -> str:
    found = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    assert found.returncode == 0, found.stderr
    return found.stdout


@pytest.fixture
def committed(served_root, settings):
    settings.ACDC_EDITS = True
    git(served_root, "config", "user.email", "dev@example.com")
    git(served_root, "config", "user.name", "Dev")
    git(served_root, "add", "-A")
    git(served_root, "commit", "-qm", "start")
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
    for op in ops:  # the turn's rows carry its id, as the turn's own proposing does
        assert propose(
            session, [op], repo=sessionsets.repository(), message=said, turn_id="t1"
        ).applied
    (committed / "src" / "other.py").write_text("B = 2\n")
    git(committed, "add", "src/other.py")
    return session


def test_it_commits_only_the_files_acdc_changed_with_the_persons_message(edited, committed):
    repo = sessionsets.repository()
    assert changed_paths(edited, repo=repo) == ["src/app.py", "src/new.py"]
    assert proposed_message(edited) == "Bump A and add B"

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
    repo = sessionsets.repository()
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
    assert 'value="Bump A and add B"' in html and ">Commit changed files</button>" in html
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
