"""The model's tools on a real repository: what they do, and every bad input they refuse."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from chat.llm.runtime import Runtime
from chat.repo import sessionsets
from chat.repo.repomap.builder import RepoMaps
from chat.repo.tools.calls import ToolCall
from chat.repo.tools.context_tools import MAX_STUBS, TOOL_NAMES, TOOL_SPECS, run_tool
from history.models import ContentObject, SessionObject

pytestmark = pytest.mark.django_db


@pytest.fixture
def root(tmp_path):
    repo = tmp_path / "repo"
    (repo / "src" / "deep").mkdir(parents=True)
    (repo / "src" / "app.py").write_text("def greet(name):\n    return f'hello {name}'\n")
    (repo / "src" / "deep" / "util.py").write_text("GREETING = 'hello'\n")
    (repo / "README.md").write_text("# Demo\nSay hello.\n")
    (repo / ".gitignore").write_text("secret.txt\n")
    (repo / "secret.txt").write_text("hello secret\n")
    (repo / "blob.bin").write_bytes(b"\x00\x01hello")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (tmp_path / "outside.txt").write_text("hello from outside\n")
    return repo


def call(session, repo, name, **args):
    return run_tool(session, ToolCall("c-" + name, name, json.dumps(args)), repo, maps=RepoMaps())


def test_every_tool_has_a_schema_the_provider_can_read():
    assert TOOL_NAMES == (
        "read_file", "list_files", "grep", "outline", "activate", "deactivate", "pin",
        "unpin",
    )  # fmt: skip
    for spec in TOOL_SPECS:
        assert spec["type"] == "function"
        assert spec["function"]["parameters"]["additionalProperties"] is False
    supports_tools = Runtime.from_settings().supports_tools
    assert supports_tools("acdc/fake") and supports_tools("gpt-4o")
    assert not supports_tools("no-such-provider/no-such-model")


def test_read_file_returns_the_content_indexes_and_activates(session, repo):
    result = call(session, repo, "read_file", path="src/app.py")
    assert result.status == "ok" and "def greet(name):" in result.output
    assert result.changed_paths == ["src/app.py"]
    assert sessionsets.active_paths(session, repo) == ["src/app.py"]
    toolcall = ContentObject.objects.get(pk=result.object_id)
    assert toolcall.type == "toolcall" and toolcall.latest_version().fields["tool"] == "read_file"
    link = SessionObject.objects.get(session=session, object=toolcall)
    assert link.active and link.in_pool


def test_list_files_lists_below_a_folder_and_leaves_unread_stubs(session, repo):
    result = call(session, repo, "list_files", path="src", pattern="*.py")
    assert result.output.splitlines() == ["src/app.py", "src/deep/util.py"]
    stubs = {e.path: e for e in sessionsets.entries(session, repo) if e.type == "file"}
    assert set(stubs) == {"src/app.py", "src/deep/util.py"}
    assert all(e.stub and not e.active for e in stubs.values())
    everything = call(session, repo, "list_files").output.splitlines()
    assert "README.md" in everything and "secret.txt" not in everything
    assert not any(p.startswith(".git/") for p in everything)


def test_grep_finds_lines_in_text_files_only_and_respects_gitignore(session, repo):
    result = call(session, repo, "grep", pattern="hel+o")
    lines = result.output.splitlines()
    assert "src/app.py:2:    return f'hello {name}'" in lines
    assert any(line.startswith("README.md:2:") for line in lines)
    assert not any(line.startswith(("secret.txt", "blob.bin")) for line in lines)
    assert call(session, repo, "grep", pattern="zzz_nowhere").output == "(no matches)"
    only = call(session, repo, "grep", pattern="GREETING", path="src/deep").output
    assert only == "src/deep/util.py:1:GREETING = 'hello'"


def test_grep_reads_the_pattern_as_python_checked_it(session, repo):
    # Inline flags and non-capturing groups are Python's (and Perl's), not POSIX extended.
    found = call(session, repo, "grep", pattern=r"(?i)DEF GREET\(").output
    assert found == "src/app.py:1:def greet(name):"
    grouped = call(session, repo, "grep", pattern=r"(?:GREET)ING = '\w+'").output
    assert grouped == "src/deep/util.py:1:GREETING = 'hello'"


def test_set_tools_change_the_same_sets_as_the_picker(session, repo):
    listed = call(session, repo, "list_files", path="src")
    assert listed.status == "ok"
    stub_id = next(
        e.object_id for e in sessionsets.entries(session, repo) if e.path == "src/app.py"
    )
    activated = call(session, repo, "activate", id=stub_id)
    assert activated.status == "ok" and "def greet" in activated.output
    assert "src/app.py" in sessionsets.active_paths(session, repo)
    assert call(session, repo, "pin", id="src/app.py").status == "ok"
    assert call(session, repo, "deactivate", id="src/app.py").status == "ok"
    assert sessionsets.active_paths(session, repo) == []
    assert sessionsets.pinned_paths(session, repo) == ["src/app.py"]
    assert call(session, repo, "unpin", id=stub_id).status == "ok"


def test_a_long_output_is_cut_with_a_note(session, repo, root):
    (root / "long.txt").write_text("x" * 50_000)
    result = call(session, repo, "read_file", path="long.txt")
    assert result.output.endswith("more characters]") and len(result.output) < 21_000


def test_listing_many_files_caps_the_stubs(session, repo, root):
    (root / "many").mkdir()
    for n in range(MAX_STUBS + 30):
        (root / "many" / f"f{n:03}.txt").write_text("x")
    call(session, repo, "list_files", path="many")
    assert SessionObject.objects.filter(session=session).count() == MAX_STUBS + 1  # + toolcall


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("read_file", '{"path": "../outside.txt"}', "traversal"),
        ("read_file", '{"path": "/etc/passwd"}', "outside the repository"),
        ("read_file", '{"path": "src/../../outside.txt"}', "traversal"),
        ("read_file", '{"path": "a\\u0000b"}', "NUL"),
        ("read_file", '{"path": "bad\\udcffname"}', "not valid UTF-8"),
        ("read_file", '{"path": "blob.bin"}', "binary"),
        ("read_file", '{"path": "missing.py"}', "no such file"),
        ("read_file", '{"path": "src"}', "not a regular file"),
        ("read_file", '{"path": "/dev/zero"}', "outside the repository"),
        ("read_file", "{not json", "not valid JSON"),
        ("read_file", '["src/app.py"]', "must be a JSON object"),
        ("read_file", "{}", "missing argument 'path'"),
        ("read_file", '{"path": 3}', "must be text"),
        ("read_file", '{"path": "a", "mode": "w"}', "unexpected argument 'mode'"),
        ("list_files", '{"path": "../"}', "traversal"),
        ("list_files", '{"path": "nowhere"}', "no such file or folder"),
        ("grep", '{"pattern": "("}', "not a valid regular expression"),
        ("grep", '{"pattern": ""}', "the pattern is empty"),
        ("grep", '{"pattern": "' + "a" * 600 + '"}', "too long"),
        ("grep", '{"pattern": "x", "path": "/etc"}', "outside the repository"),
        ("activate", '{"id": "../outside.txt"}', "traversal"),
        ("activate", '{"id": "no/such.py"}', "no such file"),
        ("deactivate", '{"id": "README.md"}', "not in this session"),
        ("write_file", '{"path": "x"}', "there is no tool 'write_file'"),
        ("grep", '{"pattern": ["a"]}', "argument 'pattern' must be text"),
        ("list_files", '{"pattern": null}', "argument 'pattern' must be text"),
        ("activate", "{}", "missing argument 'id'"),
        ("pin", '{"id": "README.md", "force": true}', "unexpected argument 'force'"),
        ("list_files", '{"pattern": "a\\u0000"}', "argument 'pattern' contains a NUL byte"),
    ],
)
def test_bad_calls_fail_with_a_clear_message_and_read_nothing_outside(
    session, repo, name, arguments, message
):
    result = run_tool(session, ToolCall("bad", name, arguments), repo, maps=RepoMaps())
    assert result.status == "fail" and message in result.output, result.output
    assert "hello from outside" not in result.output
    recorded = ContentObject.objects.get(pk=result.object_id).latest_version()
    assert recorded.fields["status"] == "fail"


def test_symlinks_out_of_the_repository_and_device_files_are_refused(session, repo, root):
    os.symlink(root.parent / "outside.txt", root / "link.txt")
    os.symlink("/dev/zero", root / "zero")
    assert "outside the repository" in call(session, repo, "read_file", path="link.txt").output
    refused = call(session, repo, "read_file", path="zero").output
    assert "outside the repository" in refused or "not a regular file" in refused
    listed = call(session, repo, "grep", pattern="outside").output
    assert "hello from outside" not in listed


def test_a_catastrophic_pattern_is_stopped(session, repo, root, monkeypatch):
    import chat.repo.tools.context_tools

    (root / "evil.txt").write_text("a" * 5000 + "!\n")
    # any search now counts as slow
    monkeypatch.setattr(chat.repo.tools.context_tools, "GREP_SECONDS", 0.001)
    result = call(session, repo, "grep", pattern="(a+)+$")
    assert result.status == "fail" and "took longer than" in result.output


def test_a_repeated_call_id_keeps_both_calls(session, repo):
    first = run_tool(session, ToolCall("same", "list_files", "{}"), repo, maps=RepoMaps())
    second = run_tool(session, ToolCall("same", "list_files", "{}"), repo, maps=RepoMaps())
    assert first.object_id != second.object_id


def test_a_tool_call_with_a_wrong_type_fails_with_the_reason(session, repo):
    result = run_tool(
        session, ToolCall("typed", "read_file", '{"path": 42}'), repo, maps=RepoMaps()
    )
    assert result.status == "fail"
    assert result.output == "Error: argument 'path' must be text"


def test_every_problem_with_a_call_is_named_at_once(session, repo):
    result = run_tool(
        session, ToolCall("many", "grep", '{"path": 1, "flags": "i"}'), repo, maps=RepoMaps()
    )
    assert result.status == "fail"
    for reason in ("missing argument 'pattern'", "'path' must be text", "argument 'flags'"):
        assert reason in result.output, result.output


def test_the_schema_the_model_sees_says_what_the_tools_accept():
    parameters = {spec["function"]["name"]: spec["function"]["parameters"] for spec in TOOL_SPECS}
    assert parameters["read_file"]["required"] == ["path"]
    assert parameters["list_files"]["required"] == []
    assert set(parameters["list_files"]["properties"]) == {"path", "pattern"}
    assert parameters["grep"]["required"] == ["pattern"]
    for name in ("activate", "deactivate", "pin", "unpin"):
        assert parameters[name]["required"] == ["id"]
    outline = parameters["activate"]["properties"]["outline"]
    assert outline["type"] == "boolean" and outline["default"] is False and outline["description"]
    for name, schema in parameters.items():
        assert schema["type"] == "object" and "title" not in schema
        assert all(
            p["type"] == "string" and p["description"]
            for key, p in schema["properties"].items()
            if (name, key) != ("activate", "outline")
        )


def test_the_arguments_are_recorded_as_the_model_sent_them(session, repo):
    result = run_tool(
        session, ToolCall("plain", "list_files", '{"pattern": "*.md"}'), repo, maps=RepoMaps()
    )
    assert result.status == "ok" and result.args == {"pattern": "*.md"}
    assert result.args_display == "list_files(pattern='*.md')"
