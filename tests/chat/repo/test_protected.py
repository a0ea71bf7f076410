"""The files an edit may change only with the person's own Accept."""

from __future__ import annotations

import subprocess
from pathlib import Path

from chat.repo.protected import hook_folders, hooks_changed, protection


def _repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


def test_it_names_the_files_that_guard_acdc(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    assert "secret" in protection(root, ".acdcignore")
    assert "project instructions" in protection(root, "AGENTS.md")
    assert "project instructions" in protection(root, ".github/copilot-instructions.md")
    assert "filters" in protection(root, ".gitattributes")
    assert "pre-commit" in protection(root, ".pre-commit-config.yaml")
    assert protection(root, "src/app.py") == ""
    assert protection(root, "docs/AGENTS.md") == ""


def test_it_compares_names_whatever_their_case_and_spelling(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    assert protection(root, ".ACDCIGNORE")
    assert protection(root, "./.acdcignore")
    assert protection(root, ".husky/../.gitattributes")


def test_it_protects_husky_and_the_configured_hooks_folder(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    assert "hooks in .husky/" in protection(root, ".husky/pre-commit")
    assert protection(root, ".githooks/pre-commit") == ""
    subprocess.run(["git", "-C", str(root), "config", "core.hooksPath", ".githooks"], check=True)
    assert "hooks in .githooks/" in protection(root, ".githooks/pre-commit")
    assert hook_folders(root) == [".husky", ".githooks"]


def test_a_hooks_path_outside_the_repository_is_not_a_folder_of_it(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    subprocess.run(["git", "-C", str(root), "config", "core.hooksPath", "../hooks"], check=True)
    assert hook_folders(root) == [".husky"]


def test_hooks_changed_names_what_a_commit_would_run(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    subprocess.run(["git", "-C", str(root), "config", "core.hooksPath", ".githooks"], check=True)
    paths = ["src/a.py", ".githooks/pre-commit", ".pre-commit-config.yaml", "AGENTS.md"]
    assert hooks_changed(root, paths) == [".githooks/pre-commit", ".pre-commit-config.yaml"]
