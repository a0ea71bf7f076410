"""`acdc chat --apply --commit MESSAGE`, run as a user runs it: after the reply's edits
apply, exactly the files acdc changed are committed, never one the person changed."""

from __future__ import annotations

import json
import subprocess

import pytest

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


def test_commit_without_edits_on_commits_nothing_and_says_why(root, tmp_path):
    env = scripted(tmp_path)
    env["ACDC_EDITS"] = "0"
    result = acdc("chat", "--new", "--model", "acdc/fake", "--commit", "x", "go", repo=root, **env)
    assert result.returncode == 1 and "--commit needs edits on" in result.stderr
