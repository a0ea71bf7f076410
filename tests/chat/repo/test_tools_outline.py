"""The model's `outline` tool: a file's signatures, through the same path checks as read_file."""

from __future__ import annotations

import json

import pytest

from chat.repo.repomap.builder import RepoMaps
from chat.repo.tools.calls import ToolCall
from chat.repo.tools.context_tools import run_tool
from history import services
from history.models import SessionObject

pytestmark = pytest.mark.django_db


@pytest.fixture
def repo_files():
    return {
        "src/shop.py": (
            "class Cart:\n"
            "    def add(self, item: str, qty: int = 1) -> None:\n"
            "        self.items.append((item, qty))\n"
        ),
        "secrets.py": "def api_key() -> str:\n    return 'k'\n",
        "README.md": "# Shop\n",
    }


@pytest.fixture
def repo_is_git():
    return True


@pytest.fixture
def session(root):
    return services.session_create(repository=str(root), model="acdc/fake")


def outline(session, repo, arguments: str):
    return run_tool(session, ToolCall("c-outline", "outline", arguments), repo, maps=RepoMaps())


def test_it_answers_with_the_signatures_and_leaves_the_sets_alone(session, repo):
    result = outline(session, repo, json.dumps({"path": "src/shop.py"}))

    assert result.status == "ok"
    assert result.output == (
        "src/shop.py:\n  class Cart\n    def add(self, item: str, qty: int = 1) -> None"
    )
    assert "append" not in result.output
    files = SessionObject.objects.filter(session=session, object__type="file")
    assert not files.filter(active=True).exists()


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        ('{"path": "secrets.py"}', "secret"),
        ('{"path": "../outside.py"}', "traversal"),
        ('{"path": ".git/config"}', ".git"),
        ('{"path": "README.md"}', "no grammar"),
        ('{"path": "src/missing.py"}', "no such file"),
        ("{}", "missing argument 'path'"),
    ],
)
def test_it_refuses_in_words(session, repo, arguments, reason):
    result = outline(session, repo, arguments)

    assert result.status == "fail"
    assert reason in result.output
    assert "api_key" not in result.output


def call(session, repo, name: str, arguments: dict):
    return run_tool(
        session, ToolCall(f"c-{name}", name, json.dumps(arguments)), repo, maps=RepoMaps()
    )


def test_activate_with_outline_puts_the_outline_in_the_sets_and_switches_back(session, repo):
    result = call(session, repo, "activate", {"id": "src/shop.py", "outline": True})

    assert result.status == "ok", result.output
    assert "active, as its outline" in result.output
    assert "def add(self, item: str, qty: int = 1) -> None" in result.output
    assert "append" not in result.output
    link = SessionObject.objects.get(session=session, object__type="file")
    assert link.active and link.outline

    pinned = call(session, repo, "pin", {"id": "src/shop.py"})
    assert "active, as its outline, pinned" in pinned.output
    whole = call(session, repo, "activate", {"id": "src/shop.py"})
    assert "as its outline" not in whole.output and "append" in whole.output
    link.refresh_from_db()
    assert link.active and not link.outline


def test_activate_with_outline_refuses_a_file_without_grammar(session, repo):
    result = call(session, repo, "activate", {"id": "README.md", "outline": True})

    assert result.status == "fail"
    assert "no grammar" in result.output
    assert not SessionObject.objects.filter(
        session=session, active=True, object__type="file"
    ).exists()
