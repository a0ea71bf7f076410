"""The one listing of the repository: git's view, without .git/ and acdc's data folder."""

from __future__ import annotations

import subprocess
from pathlib import Path

from chat.repo import git


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for name in (
        "README.md",
        ".github/workflows/ci.yml",
        ".gitignore",
        "build/out.o",
        ".acdc/acdc.sqlite3",
    ):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    (root / ".gitignore").write_text("build/\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def test_it_lists_tracked_and_untracked_files_but_not_ignored_ones_or_acdcs_data(tmp_path):
    root = _repo(tmp_path)
    assert git.list_files(root).paths == [".github/workflows/ci.yml", ".gitignore", "README.md"]


def test_a_folder_that_only_starts_like_git_is_listed(tmp_path):
    assert git.hidden(".git/config") and git.hidden(".acdc/secret_key")
    assert not git.hidden(".github/workflows/ci.yml") and not git.hidden(".gitignore")


def test_without_git_it_walks_the_folder_and_still_hides_git_and_data(tmp_path):
    root = tmp_path / "plain"
    for name in ("a.py", ".git/HEAD", ".acdc/db", "sub/b.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    assert git.list_files(root).paths == ["a.py", "sub/b.py"]


def test_below_a_folder_it_lists_only_that_folder(tmp_path):
    root = _repo(tmp_path)
    assert git.list_files(root, ".github").paths == [".github/workflows/ci.yml"]


def test_the_ignore_rules_follow_gitignore_and_always_hide_git_and_data(tmp_path):
    root = _repo(tmp_path)
    rules = git.IgnoreRules(root)
    assert rules.ignored("build/out.o") and rules.ignored(".acdc/x") and rules.ignored(".git/HEAD")
    assert not rules.ignored("README.md") and not rules.ignored(".github/workflows/ci.yml")


def test_a_backslash_in_a_file_name_is_part_of_the_name(tmp_path):
    root = _repo(tmp_path)
    (root / "odd\\name.txt").write_text("x\n")
    assert "odd\\name.txt" in git.list_files(root).paths


def test_a_git_work_tree_is_told_from_a_plain_folder(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    assert git.is_work_tree(plain) is False
    subprocess.run(["git", "init", "-q", str(plain)], check=True)
    assert git.is_work_tree(plain) is True
