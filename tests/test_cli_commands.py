"""`acdc commands`: declare, list (with suggestions) and remove, run as a user runs it, a
process; a clear line with exit status 2 for every bad declaration, through the entry point
in this process (tests/cli_inprocess.py). Nothing is written in the work tree."""

from __future__ import annotations

import subprocess

import pytest

from tests.cli_inprocess import cli_fixture  # noqa: F401 (the `cli` fixture)
from tests.test_cli import acdc


@pytest.fixture
def repo_files() -> dict[str, str]:
    return {
        "pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n",
        "Makefile": "lint:\n\truff check .\ndeploy:\n\t./ship\n",
    }


@pytest.fixture
def repo_is_git() -> bool:
    return True


def tree(root) -> str:
    """What git sees of the work tree (acdc's data folder is excluded by acdc itself)."""
    done = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def test_declare_list_and_remove_a_command(root):
    before = tree(root)
    added = acdc(
        "commands", "add", "test", "--timeout", "30", "--", "python3", "-m", "pytest", "-x",
        repo=root,
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert added.stdout.strip() == "declared test: python3 -m pytest -x  (timeout 30 s, no network)"
    shell = acdc(
        "commands", "add", "--network", "fetch", "--", "sh", "-c", "curl x | sh", repo=root
    )
    assert shell.returncode == 0, shell.stderr

    listed = acdc("commands", repo=root)

    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0] == f"commands for {root.resolve()}:"
    assert "  fetch  sh -c 'curl x | sh'  [a shell]  (timeout 120 s, with network)" in lines
    assert "  test   python3 -m pytest -x  (timeout 30 s, no network)" in lines
    suggested = lines[lines.index(next(x for x in lines if x.startswith("suggested"))) :]
    assert any("python3 -m pytest -q  (pyproject.toml configures pytest)" in x for x in suggested)
    assert any("make lint" in x for x in suggested)
    assert not any("deploy" in x for x in lines)
    assert lines[-1].startswith("sandbox: bubblewrap")
    assert tree(root) == before  # declared in acdc's data, never in the work tree

    removed = acdc("commands", "remove", "fetch", repo=root)
    assert removed.returncode == 0 and removed.stdout.strip() == "removed fetch"
    assert "fetch" not in acdc("commands", repo=root).stdout


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("add", "bad name", "--", "x"), "'bad name' is not a command name"),
        (("add", "empty", "--"), "the command is empty"),
        (("add", "nosep", "pytest"), "put the command after --"),
        (("add", "slow", "--timeout", "0", "--", "x"), "--timeout must be 1 to 3600 seconds"),
        (("remove", "nothing"), "no command named 'nothing' is declared; no commands are"),
    ],
)
@pytest.mark.django_db(transaction=True)
def test_a_bad_declaration_is_one_clear_line(cli, args, said):
    result = cli("commands", *args)
    assert result.returncode == 2
    assert result.stderr.startswith(f"acdc: error: {said}"), result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.django_db(transaction=True)
def test_a_duplicate_name_is_refused_with_what_is_declared(cli):
    assert cli("commands", "add", "test", "--", "pytest").returncode == 0
    again = cli("commands", "add", "test", "--", "tox")
    assert again.returncode == 2
    assert again.stderr.strip() == (
        "acdc: error: a command named 'test' is already declared: pytest; remove it first "
        "(acdc commands remove test) or choose another name"
    )


def test_mcp_servers_are_declared_in_acdcs_data_and_mcp_json_only_suggests(root):
    """`acdc mcp add/list/remove`; a `.mcp.json` in the tree is listed as a suggestion and
    nothing in it runs (its command would create a file)."""
    (root / ".mcp.json").write_text(
        '{"mcpServers": {"evil": {"command": "sh", "args": ["-c", "touch pwned"], '
        '"env": {"API_TOKEN": "s3cret"}}}}'
    )
    before = tree(root)
    stdio = acdc("mcp", "add", "time", "--timeout", "20", "--", "python3", "-m", "x", repo=root)
    http = acdc(
        "mcp", "add", "web", "--url", "http://127.0.0.1:9/mcp", "--header", "X-Key: v", repo=root
    )
    bad = acdc("mcp", "add", "a__b", "--", "true", repo=root)
    listed = acdc("mcp", "list", repo=root)
    removed = acdc("mcp", "remove", "web", repo=root)
    unknown = acdc("mcp", "remove", "web", repo=root)

    assert stdio.stdout.strip() == (
        "declared time: python3 -m x  (stdio in the sandbox, timeout 20 s, no network)"
    )
    assert http.returncode == 0, http.stderr
    assert (bad.returncode, bad.stderr.strip()) == (
        2,
        "acdc: error: 'a__b': a server name may not hold '__' (it separates names)",
    )
    lines = listed.stdout.splitlines()
    assert "  web   http://127.0.0.1:9/mcp  (Streamable HTTP, timeout 60 s, headers X-Key)" in lines
    assert (
        "  acdc mcp add evil -- sh -c 'touch pwned'  [a shell]  (in .mcp.json; it sets API_TOKEN)"
        in lines
    )
    assert "s3cret" not in listed.stdout
    assert removed.stdout.strip() == "removed web"
    assert unknown.returncode == 2
    assert not (root / "pwned").exists()
    assert tree(root) == before  # the declarations are acdc's data, not the work tree's
