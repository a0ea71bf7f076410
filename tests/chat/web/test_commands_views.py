"""Session tools → Commands over HTTP, as the page's htmx calls it: declare from a suggestion
or by hand, remove, the check after applying edits, and the notice of a machine without a
sandbox. Every answer is the part drawn again; bad input is a message in it."""

from __future__ import annotations

import pytest
from django.template.loader import render_to_string

from chat.repo.commands import declaring
from chat.repo.commands.runner import CommandRuns
from chat.repo.commands.sandbox import Sandbox
from chat.web.views_commands import commands_context
from history.models import Session

pytestmark = pytest.mark.django_db
PYPROJECT = '[project]\nname = "demo"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n'
MAKEFILE = "test:\n\tpython3 -m pytest\n\ndeploy:\n\tscp x y\n"


@pytest.fixture
def repo_files() -> dict[str, str]:
    return {"pyproject.toml": PYPROJECT, "Makefile": MAKEFILE, "src/app.py": "x = 1\n"}


@pytest.fixture
def part(client, served, served_root, session):
    """POST to one of the part's endpoints; the part's HTML back."""

    def post(action: str, data: dict) -> str:
        response = client.post(f"/s/{session.id}/commands/{action}/", data)
        assert response.status_code == 200, response.content
        return response.content.decode()

    return post


def names(root) -> list[str]:
    return [c.name for c in declaring.declared(str(root))]


def test_the_part_offers_what_the_repository_suggests_and_adds_nothing(
    client, served, served_root, session
):
    html = client.get(f"/s/{session.id}/commands/").content.decode()
    assert 'aria-label="Suggested commands"' in html
    assert "pyproject.toml configures pytest" in html and "python3 -m pytest -q" in html
    assert "Makefile has a &#x27;test&#x27; target" in html
    assert 'aria-label="Add test"' in html and 'aria-label="Add make-test"' in html
    assert "deploy" not in html  # only checking targets are offered
    assert "None declared yet" in html and names(served_root) == []


def test_a_suggestion_is_added_as_offered(part, served_root):
    html = part("add", {"name": "make-test", "argv": ["make", "test"]})
    assert "Declared make-test: make test (2 words)." in html
    assert 'aria-label="Remove make-test"' in html and 'aria-label="Add make-test"' not in html
    added = declaring.find(str(served_root), "make-test")
    assert added is not None and added.argv == ("make", "test") and not added.network


def test_a_suggestion_changed_in_the_page_is_refused(part, served_root):
    html = part("add", {"name": "make-test", "argv": ["make", "deploy"]})
    assert "is not suggested here any more" in html and 'role="alert"' in html
    assert names(served_root) == []


def test_a_command_declared_by_hand_is_split_into_words_and_shown_back(part, served_root):
    typed = {"name": "lint", "command": "sh -c 'ruff check . && echo ok'", "timeout": "30"}
    html = part("add", {**typed, "network": "on"})
    assert "Declared lint: sh -c &#x27;ruff check . &amp;&amp; echo ok&#x27;  [a shell]" in html
    assert "(3 words)" in html and "30 s timeout" in html and ">network</span>" in html
    lint = declaring.find(str(served_root), "lint")
    assert lint.argv == ("sh", "-c", "ruff check . && echo ok")
    assert lint.timeout_seconds == 30 and lint.network


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ({"name": "", "command": "make test"}, "Give the command a name"),
        ({"name": "no spaces", "command": "make test"}, "is not a command name"),
        ({"name": "test", "command": "   "}, "The command is empty"),
        ({"name": "test", "command": "printf 'a\0b'"}, "without NUL bytes"),
        ({"name": "test", "command": "echo 'unclosed"}, "cannot be split into words"),
        ({"name": "test", "command": "make", "timeout": "soon"}, "The timeout must be"),
        ({"name": "test", "command": "make", "timeout": "0"}, "The timeout must be from 1"),
    ],
)
def test_bad_input_by_hand_is_a_message_beside_the_form(part, served_root, typed, said):
    html = part("add", {"timeout": "120", **typed})
    assert said in html and 'role="alert"' in html
    assert '<details class="command-declare" open>' in html  # the form stays open
    assert f'value="{typed["name"]}"' in html  # with what was typed
    assert names(served_root) == []


def test_a_name_declared_twice_says_what_holds_it(part, served_root):
    declaring.add(str(served_root), "test", ["make", "test"])
    html = part("add", {"name": "test", "command": "pytest"})
    assert "A command named &#x27;test&#x27; is already declared: make test" in html
    assert declaring.find(str(served_root), "test").argv == ("make", "test")


def test_remove_drops_a_command_and_an_unknown_name_says_which_are_declared(part, served_root):
    declaring.add(str(served_root), "test", ["make", "test"])
    declaring.add(str(served_root), "lint", ["make", "lint"])
    html = part("remove", {"name": "test"})
    assert "Removed test." in html and 'aria-label="Remove test"' not in html
    assert names(served_root) == ["lint"]
    html = part("remove", {"name": "nosuch"})
    assert "No command named &#x27;nosuch&#x27; is declared; declared: lint" in html
    assert 'role="alert"' in html and names(served_root) == ["lint"]


def test_the_check_switch_sets_the_session_and_shows_the_choice(part, served_root, session):
    declaring.add(str(served_root), "test", ["make", "test"])
    html = part("check", {"name": "test"})
    assert "After edits apply, test runs." in html
    assert '<option value="test" selected>' in html
    session.refresh_from_db()
    assert session.check_command == "test"
    html = part("check", {"name": "tset"})
    assert "There is no declared command &#x27;tset&#x27;; declared: test" in html
    assert Session.objects.get(pk=session.pk).check_command == "test"
    html = part("check", {"name": ""})
    assert "No check after applying edits." in html and '<option value="" selected>' in html
    assert Session.objects.get(pk=session.pk).check_command == ""


def test_removing_the_checked_command_turns_the_check_off(part, served_root, session):
    declaring.add(str(served_root), "test", ["make", "test"])
    part("check", {"name": "test"})
    html = part("remove", {"name": "test"})
    assert "the check after applying edits is off" in html
    assert Session.objects.get(pk=session.pk).check_command == ""


def test_a_check_whose_command_went_away_says_so(client, served, served_root, session):
    declaring.add(str(served_root), "test", ["make", "test"])
    Session.objects.filter(pk=session.pk).update(check_command="test")
    declaring.remove(str(served_root), "test")  # as `acdc commands remove test` does
    html = client.get(f"/s/{session.id}/commands/").content.decode()
    assert '<option value="test" selected>test (not declared)</option>' in html
    assert "test is no longer declared, so no check runs" in html


def test_the_check_switch_is_absent_when_edits_are_off(
    client, served, served_root, session, settings
):
    settings.ACDC_EDITS = False
    html = client.get(f"/s/{session.id}/commands/").content.decode()
    assert "Check after applying edits" not in html
    assert client.post(f"/s/{session.id}/commands/check/", {"name": ""}).status_code == 404


def test_the_part_needs_a_session_and_posts(client, served, served_root):
    assert client.get("/s/nosuch/commands/").status_code == 404
    assert client.post("/s/nosuch/commands/add/", {"name": "x", "command": "y"}).status_code == 404
    assert client.get("/s/nosuch/commands/remove/").status_code == 405


def test_the_session_tools_load_the_part(client, served, served_root, session):
    html = client.get(f"/s/{session.id}/tools/").content.decode()
    assert f'hx-get="/s/{session.id}/commands/"' in html


def test_without_a_sandbox_the_part_says_runs_wait_for_approval(served_root, session):
    reason = "bwrap (Debian's bubblewrap) is not installed"
    runs = CommandRuns(Sandbox(None, reason=reason))
    html = render_to_string("chat/_commands.html", commands_context(session, runs))
    assert html.count('role="note"') == 1
    assert f"No sandbox on this machine: {reason.replace(chr(39), '&#x27;')}." in html
    assert "only after you approve each run" in html
    boxed = render_to_string("chat/_commands.html", commands_context(session, CommandRuns()))
    assert CommandRuns().sandbox.available and "No sandbox" not in boxed
