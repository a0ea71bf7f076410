"""Every tool fed the arguments an attacker or a confused model would send.

Each one ends as a failed tool result whose text says why, never as an exception out of
`run_tool` (which would end the turn), and never with a byte from outside the repository,
from git's or acdc's own folders, or from a secret-shaped file.
"""

from __future__ import annotations

import json

import pytest

from chat.repo.repomap.builder import RepoMaps
from chat.repo.tools import context_tools as tools
from chat.repo.tools.calls import ToolCall
from chat.repo.tools.context_tools import TOOL_NAMES, run_tool
from history.models import ContentObject

pytestmark = pytest.mark.django_db

SECRET = "SECRET-VALUE"
HOSTILE_PATHS = {
    "a 300-character segment": "x" * 300,
    "a 300-character folder": "src/" + "y" * 300 + "/app.py",
    "a 300-character .py name": "z" * 300 + ".py",
    "a 5,000-character path": "/".join(["abcd"] * 1000),
    "a NUL": "src/app.py\0.txt",
    "a newline": "src/app.py\n../../etc/passwd",
    "..": "../outside.txt",
    "an absolute path outside": "/etc/passwd",
    ".git/config": ".git/config",
    ".GIT/config": "./.GIT/config",
    "acdc's data folder": ".acdc/acdc.sqlite3",
    "a secret-shaped file": ".env",
    "an option": "-rf",
    "an option with a value": "--output=/tmp/acdc-hostile",
    "a lone surrogate": "src/\ud800.py",
}
WRONG_TYPES = {"a number": 5, "null": None, "a list": ["src/app.py"], "an object": {"p": 1}}
SLOT = {  # the argument each tool takes a path or an id in, and what else it needs
    "read_file": ("path", {}),
    "list_files": ("path", {}),
    "grep": ("path", {"pattern": "MARKER"}),
    "outline": ("path", {}),
    "activate": ("id", {}),
    "deactivate": ("id", {}),
    "pin": ("id", {}),
    "unpin": ("id", {}),
}


@pytest.fixture
def repo_files():
    return {
        "src/app.py": "def app():\n    return 'MARKER'\n",
        ".env": f"MARKER {SECRET}\n",
        ".acdc/acdc.sqlite3": f"MARKER {SECRET}\n",
    }


@pytest.fixture
def repo_is_git():
    return True


@pytest.fixture
def hostile_root(root, settings):
    """The repository with acdc's data folder inside it and a marked git config."""
    settings.ACDC_DATA_DIR = root / ".acdc"
    with (root / ".git" / "config").open("a") as config:
        config.write(f"# MARKER {SECRET}\n")
    (root.parent / "outside.txt").write_text(f"MARKER {SECRET}\n")
    return root


def call(session, repo, name, args, call_id="c-1"):
    return run_tool(session, ToolCall(call_id, name, json.dumps(args)), repo, maps=RepoMaps())


def assert_refused(result) -> None:
    assert result.status == "fail", result.output
    assert result.output.startswith("Error: ") and len(result.output) < 2_000
    assert SECRET not in result.output and "root:" not in result.output
    assert ContentObject.objects.filter(pk=result.object_id).exists()  # recorded all the same


@pytest.mark.usefixtures("hostile_root")
@pytest.mark.parametrize("tool", TOOL_NAMES)
@pytest.mark.parametrize("kind", HOSTILE_PATHS)
def test_every_tool_refuses_a_hostile_path_with_a_reason(session, repo, tool, kind):
    slot, other = SLOT[tool]
    assert_refused(call(session, repo, tool, {**other, slot: HOSTILE_PATHS[kind]}))


@pytest.mark.parametrize("tool", TOOL_NAMES)
@pytest.mark.parametrize("kind", WRONG_TYPES)
def test_every_tool_refuses_an_argument_of_the_wrong_type(session, repo, tool, kind):
    slot, other = SLOT[tool]
    result = call(session, repo, tool, {**other, slot: WRONG_TYPES[kind]})
    assert_refused(result)
    assert f"argument {slot!r}" in result.output


@pytest.mark.usefixtures("hostile_root")
@pytest.mark.parametrize("kind", HOSTILE_PATHS)
def test_grep_refuses_a_hostile_pattern_or_finds_nothing_secret(session, repo, kind):
    result = call(session, repo, "grep", {"pattern": HOSTILE_PATHS[kind]})
    assert SECRET not in result.output and "root:" not in result.output


@pytest.mark.parametrize("tool", TOOL_NAMES)
def test_a_lone_surrogate_written_raw_in_the_arguments_is_refused(session, repo, tool):
    slot, _ = SLOT[tool]
    raw = '{"' + slot + '": "src/\ud800.py"}'  # not escaped: JSON itself accepts it
    result = run_tool(session, ToolCall("c-raw", tool, raw), repo, maps=RepoMaps())
    assert_refused(result)
    assert "not valid UTF-8" in result.output


def test_a_call_id_that_cannot_be_stored_is_replaced(session, repo):
    result = call(session, repo, "list_files", {}, call_id="bad\0id\ud800")
    assert result.status == "ok" and result.call_id.startswith("call_")
    assert ContentObject.objects.filter(pk=result.object_id).exists()


def test_a_tool_that_breaks_unexpectedly_fails_its_call_and_nothing_else(
    session, repo, monkeypatch
):
    def broken(session, repo, result, maps):  # stands in for a bug nobody has found yet
        raise RuntimeError("something nobody foresaw\nwith a second line")

    monkeypatch.setitem(tools._TOOLS, "list_files", broken)
    result = call(session, repo, "list_files", {})
    assert_refused(result)
    assert result.output == "Error: the tool failed: something nobody foresaw"
