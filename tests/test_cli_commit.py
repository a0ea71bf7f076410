"""`acdc chat --apply --commit MESSAGE`, run as a user runs it: after the reply's edits
apply, exactly the files acdc changed are committed, never one the person changed. Its
refusals are tested through the entry point in this process (tests/cli_inprocess.py)."""

from __future__ import annotations

import json
import subprocess

import pytest

from acdc import chatedits
from contextcore.edits import EditOp
from history import services
from tests import serving
from tests.chat.repo.edits_support import written
from tests.cli_inprocess import cli_fixture  # noqa: F401 (the `cli` fixture)
from tests.test_cli import acdc


@pytest.fixture
def repo_files() -> dict[str, str]:
    return {"main.py": "print('hi')\n", "notes.md": "# Notes\n"}


@pytest.fixture
def repo_is_git() -> bool:
    return True


def git(root, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def scripted(tmp_path) -> dict[str, str]:
    args = {"path": "main.py", "old_text": "print('hi')", "new_text": "print('bye')"}
    steps = [{"tool_calls": [{"name": "edit_file", "arguments": args, "id": "e1"}]}, {"text": "ok"}]
    script = tmp_path / "script.json"
    script.write_text(json.dumps(steps))
    return {"ACDC_FAKE_SCRIPT": str(script), "ACDC_EDITS": "1"}


def test_commit_commits_only_the_files_acdc_changed(root, tmp_path):
    for setting in (("user.email", "dev@example.com"), ("user.name", "Dev")):
        git(root, "config", *setting)
    git(root, "add", "main.py", "notes.md")
    git(root, "commit", "-qm", "start")
    (root / "notes.md").write_text("# Notes\nmine\n")  # the person's own change
    result = acdc(
        "chat", "--new", "--model", "acdc/fake", "--apply", "--commit", "Say bye", "go",
        repo=root, **scripted(tmp_path),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "acdc: committed main.py: " in result.stderr
    assert git(root, "show", "--name-only", "--format=%s", "HEAD") == "Say bye\n\nmain.py\n"
    assert git(root, "status", "--porcelain", "--", "notes.md") == " M notes.md\n"


@pytest.mark.django_db(transaction=True)
def test_commit_without_edits_on_commits_nothing_and_says_why(cli, tmp_path):
    env = scripted(tmp_path)
    env["ACDC_EDITS"] = "0"
    result = cli("chat", "--new", "--model", "acdc/fake", "--commit", "x", "go", **env)
    assert result.returncode == 1 and "--commit needs edits on" in result.stderr


@pytest.mark.django_db
def test_commit_in_this_process_refuses_a_changed_hook_without_the_persons_word(
    root, settings, capsys
):
    """No terminal to ask (pytest's stdin): one line naming the hook and the flags."""
    settings.ACDC_EDITS, settings.ACDC_REPO = True, root
    for setting in (("user.email", "dev@example.com"), ("user.name", "Dev"),
                    ("core.hooksPath", ".githooks")):  # fmt: skip
        git(root, "config", *setting)
    (root / ".githooks").mkdir()
    (root / ".githooks" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (root / ".githooks" / "pre-commit").chmod(0o755)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")
    session = services.session_create(repository=str(root), model="acdc/fake")
    change = EditOp(".githooks/pre-commit", "replace", "exit 0", "touch hook-ran")
    assert written(session, [change], repo=serving.repository(), turn_id="t1").applied

    assert chatedits.commit_files(session.id, "Hook") == 1
    assert capsys.readouterr().err == (
        "acdc: not committed: acdc's edits changed .githooks/pre-commit, which git would run "
        "on this commit; add --run-changed-hooks to run it, or --no-hooks to commit without "
        "any hook\n"
    )
    assert not (root / "hook-ran").exists() and git(root, "log", "--format=%s") == "start\n"

    assert chatedits.commit_files(session.id, "Hook", "run") == 0
    assert (root / "hook-ran").exists()
