"""Odd file names through every tool and the map: each path is the file it names.

One ordinary file per kind of odd name (a colon, non-ASCII letters, a line break, a
leading dash, spaces inside and at the edges, a 300-character path, names that read as git
pathspec magic or a git option), each with a secret-shaped twin of the same
oddness, plus the four names that once leaked through grep. Every tool finds the ordinary
file under its own name and never sends a byte of a secret-shaped one; the map names each
file on one line.
"""

from __future__ import annotations

import json

import pytest

from chat.repo import sessionsets
from chat.repo.git import IgnoreRules, shown
from chat.repo.repomap.builder import RepoMaps
from chat.repo.tools.calls import ToolCall
from chat.repo.tools.context_tools import SET_TOOLS, run_tool
from contextcore.tokens import TokenCounter
from tests.chat.repo.odd_support import ALL_ODD, SECRET

pytestmark = pytest.mark.django_db

ODD = ALL_ODD  # the kinds of odd_support, the 300-character path and git-looking names too
LEAKED_BEFORE = ("a:b/.env", "notes:.env", "données/.env", "clés.pem")
KINDS = list(ODD)


def _function(kind: str) -> str:
    return "marker_" + "".join(c for c in kind if c.isalpha())


@pytest.fixture
def repo_files():
    files: dict[str, str | bytes] = {"README.md": "# Odd names\n"}
    for kind, (ordinary, secret) in ODD.items():
        files[ordinary] = f"def {_function(kind)}():\n    return 'MARKER'\n"
        files[secret] = f"MARKER {SECRET}\n"
    for secret in LEAKED_BEFORE:
        files[secret] = f"MARKER {SECRET}\n"
    return files


@pytest.fixture
def repo_is_git():
    return True


def call(session, repo, name, **args):
    return run_tool(session, ToolCall(f"c-{name}", name, json.dumps(args)), repo, maps=RepoMaps())


def named(line: str) -> str:
    """The path a listing line names, read back the way the model would."""
    return json.loads(line) if line.startswith('"') else line


def test_grep_sends_no_secret_shaped_file_whatever_its_name(session, repo):
    result = call(session, repo, "grep", pattern="MARKER")
    assert result.status == "ok"
    assert SECRET not in result.output
    lines = result.output.splitlines()
    assert len(lines) == len(ODD)  # one line per ordinary file, none split by a name
    assert all(line.endswith(":2:    return 'MARKER'") for line in lines)


@pytest.mark.parametrize("kind", KINDS)
def test_read_file_reads_the_odd_name_and_refuses_its_secret_twin(session, repo, kind):
    ordinary, secret = ODD[kind]
    result = call(session, repo, "read_file", path=ordinary)
    assert result.status == "ok" and f"def {_function(kind)}():" in result.output
    assert result.output.splitlines()[0].startswith(f"{shown(ordinary)} (id=")
    refused = call(session, repo, "read_file", path=secret)
    assert refused.status == "fail" and SECRET not in refused.output


@pytest.mark.parametrize("kind", KINDS)
def test_list_files_names_the_odd_name_on_one_line_and_never_its_twin(session, repo, kind):
    ordinary, secret = ODD[kind]
    lines = call(session, repo, "list_files").output.splitlines()
    assert shown(ordinary) in lines
    assert {named(line) for line in lines} == {"README.md", *(o for o, _ in ODD.values())}
    folder = ordinary.rsplit("/", 1)[0] if "/" in ordinary else ordinary
    below = call(session, repo, "list_files", path=folder)
    assert below.status == "ok" and below.output.splitlines() == [shown(ordinary)]
    alone = call(session, repo, "list_files", path=secret)
    assert alone.status == "fail" and SECRET not in alone.output


@pytest.mark.parametrize("kind", KINDS)
def test_grep_below_the_odd_name_finds_it_and_not_its_twin(session, repo, kind):
    ordinary, secret = ODD[kind]
    found = call(session, repo, "grep", pattern="MARKER", path=ordinary)
    assert found.status == "ok"
    assert found.output.splitlines() == [f"{shown(ordinary)}:2:    return 'MARKER'"]
    twin = call(session, repo, "grep", pattern="MARKER", path=secret)
    assert twin.status == "fail" and SECRET not in twin.output


@pytest.mark.parametrize("kind", KINDS)
def test_outline_reads_the_odd_name_and_refuses_its_secret_twin(session, repo, kind):
    ordinary, secret = ODD[kind]
    result = call(session, repo, "outline", path=ordinary)
    assert result.status == "ok"
    assert result.output.splitlines() == [f"{shown(ordinary)}:", f"  def {_function(kind)}()"]
    refused = call(session, repo, "outline", path=secret)
    assert refused.status == "fail" and SECRET not in refused.output


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("tool", SET_TOOLS)
def test_the_set_tools_take_the_odd_name_and_refuse_its_secret_twin(session, repo, kind, tool):
    ordinary, secret = ODD[kind]
    before = {"deactivate": "activate", "unpin": "pin"}.get(tool)
    if before:  # what a deactivate or unpin undoes
        assert call(session, repo, before, id=ordinary).status == "ok"
    result = call(session, repo, tool, id=ordinary)
    assert result.status == "ok", result.output
    assert result.output.splitlines()[0].startswith(f"{shown(ordinary)} (id=")
    if tool == "activate":
        assert sessionsets.active_paths(session, repo) == [ordinary]
        assert f"def {_function(kind)}():" in result.output
    refused = call(session, repo, tool, id=secret)
    assert refused.status == "fail" and SECRET not in refused.output
    assert secret not in sessionsets.active_paths(session, repo)


READ_TOOLS = (("read_file", "path"), ("outline", "path"), ("list_files", "path"), ("grep", "path"))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("tool", "key"), (*READ_TOOLS, ("activate", "id")))
def test_a_refusal_names_the_odd_file_on_one_line_as_the_listings_do(
    session, repo, kind, tool, key
):
    ordinary, secret = ODD[kind]
    extra = {"pattern": "MARKER"} if tool == "grep" else {}
    refused = call(session, repo, tool, **{key: secret}, **extra)
    assert refused.status == "fail"
    [line] = refused.output.splitlines()
    name = shown(secret)  # a colon's name quoted, as list_files writes it
    whole = len(name) <= 120
    assert (f"{name}: this file looks like" if whole else f"{name[:100]}… (") in line
    missing = call(session, repo, "read_file", path=f"{ordinary}.gone\nx")
    [line] = missing.output.splitlines()
    name = shown(f"{ordinary}.gone\nx")
    assert line.startswith(f"Error: {name}: " if whole else f"Error: {name[:100]}… (")


def test_the_map_names_every_odd_file_on_one_line_and_no_secret(root):
    built = RepoMaps().build(root, count=TokenCounter().count_text, budget=4000)
    assert SECRET not in built.main
    lines = built.main.splitlines()
    for kind, (ordinary, secret) in ODD.items():
        at = lines.index(f"{shown(ordinary)}:")
        assert lines[at + 1] == f"  def {_function(kind)}()"
        assert shown(secret) not in lines and secret not in built.main
    headers = [line for line in lines[1:] if not line.startswith(" ")]
    assert {named(line.removesuffix(":")) for line in headers} <= {
        "README.md",
        *(o for o, _ in ODD.values()),
    }


def test_gitignore_rules_read_a_name_with_a_line_feed_as_git_does(root):
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    rules = IgnoreRules(root)
    assert rules.ignored("new\nline.log") and rules.ignored("new\nline/build/x.py")
    assert not rules.ignored("new\nline.py") and not rules.ignored("a.log\n")
