"""git as the edits' tests drive it: a command that must succeed, and a served repository
committed as it stands (the start every commit test compares against)."""

from __future__ import annotations

import subprocess


def git(root, *args: str) -> str:
    found = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    assert found.returncode == 0, found.stderr
    return found.stdout


def commit_everything(root) -> None:
    git(root, "config", "user.email", "dev@example.com")
    git(root, "config", "user.name", "Dev")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")
