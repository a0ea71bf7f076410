"""The files an edit may change only with the person's own Accept."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from acdc.env import env_repo_paths
from chat.repo.protected import absent, existing, hook_folders, hooks_changed, protection


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


def test_other_tools_configuration_is_protected_folders_with_all_inside(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    assert "Claude Code" in protection(root, ".claude/settings.json")
    assert "Claude Code" in protection(root, ".Claude/commands/deep/x.md")
    assert "MCP servers" in protection(root, ".mcp.json")
    assert "VS Code" in protection(root, ".vscode/tasks.json")
    for path in (".codex/config.toml", ".cursor/mcp.json", ".idea/workspace.xml"):
        assert protection(root, path), path
    assert "direnv" in protection(root, ".envrc")
    assert "GitHub Actions" in protection(root, ".github/workflows/ci.yml")
    assert "submodules" in protection(root, ".gitmodules")
    assert protection(root, ".devcontainer/devcontainer.json")
    assert protection(root, ".github/ISSUE_TEMPLATE/bug.md") == ""
    assert protection(root, "src/.vscode-like.txt") == ""
    assert protection(root, ".vscodex/tasks.json") == ""


def test_the_person_adds_paths_and_a_run_binds_or_moves_the_outermost(
    tmp_path: Path, settings
) -> None:
    root = _repo(tmp_path)
    settings.ACDC_PROTECTED_PATHS = ("Makefile", "tools", ".github")
    assert "ACDC_PROTECTED_PATHS" in protection(root, "tools/run.sh")
    assert "ACDC_PROTECTED_PATHS" in protection(root, "makefile")
    assert "GitHub Actions" in protection(root, ".github/workflows/ci.yml")  # acdc's reason first
    (root / ".vscode").mkdir()
    (root / "Makefile").write_text("all:\n")
    present = {p.relative_to(root).as_posix() for p in existing(root)}
    missing = {p.relative_to(root).as_posix() for p in absent(root)}
    assert {".vscode", "Makefile"} <= present and {".envrc", "tools", ".github"} <= missing
    assert ".github/workflows" not in missing | present  # moving .github moves it too


def test_protected_paths_take_no_wildcards_and_stay_inside(monkeypatch) -> None:
    monkeypatch.setenv("ACDC_PROTECTED_PATHS", " /tools/ , Makefile,tools")
    assert env_repo_paths("ACDC_PROTECTED_PATHS") == ("tools", "Makefile")
    for value in ("*.code-workspace", "../elsewhere", "a/./b"):
        monkeypatch.setenv("ACDC_PROTECTED_PATHS", value)
        with pytest.raises(ImproperlyConfigured, match="without wildcards"):
            env_repo_paths("ACDC_PROTECTED_PATHS")
