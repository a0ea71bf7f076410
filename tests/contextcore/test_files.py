from __future__ import annotations

import os

import pytest

from contextcore.files import FileContext, normalize_path


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("print('hi')\n")
    return tmp_path


def test_it_adds_a_file_with_explicit_content():
    files = FileContext()
    result = files.add_file("a.py", "x = 1\n")
    assert result.ok and files.get_content("a.py") == "x = 1\n"


def test_it_adds_a_file_from_disk(repo):
    files = FileContext(repo)
    assert files.add_file("src/app.py")
    assert files.get_content("src/app.py") == "print('hi')\n"


def test_a_missing_file_returns_false_with_a_reason(repo):
    result = FileContext(repo).add_file("nope.py")
    assert not result
    assert result.reason == "no such file"


def test_it_rejects_binary_files_with_nul_bytes(repo):
    (repo / "blob.bin").write_bytes(b"abc\0def")
    result = FileContext(repo).add_file("blob.bin")
    assert not result.ok and "binary" in result.reason


def test_it_rejects_files_that_are_not_utf8(repo):
    (repo / "latin.txt").write_bytes("café".encode("latin-1"))
    result = FileContext(repo).add_file("latin.txt")
    assert not result.ok and "UTF-8" in result.reason


def test_it_blocks_path_traversal(repo):
    result = FileContext(repo).add_file("../etc/passwd")
    assert not result.ok and "traversal" in result.reason
    assert not FileContext().add_file("a/../../b", "x").ok


def test_it_rejects_symlinks_that_resolve_outside_the_repository(repo, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "secret.txt"
    outside.write_text("secret\n")
    os.symlink(outside, repo / "link.txt")
    result = FileContext(repo).add_file("link.txt")
    assert not result.ok and "outside the repository" in result.reason


def test_it_accepts_symlinks_inside_the_repository(repo):
    os.symlink(repo / "src" / "app.py", repo / "alias.py")
    assert FileContext(repo).add_file("alias.py").ok


def test_it_refuses_files_over_the_size_cap_and_says_why(repo):
    (repo / "big.txt").write_text("x" * 2000)
    result = FileContext(repo, size_cap=1000).add_file("big.txt")
    assert not result.ok and "too large" in result.reason and "1,000" in result.reason
    assert not FileContext(size_cap=10).add_file("a.txt", "y" * 11).ok


def test_it_normalizes_paths_relative_to_the_repository():
    assert normalize_path("\\src\\app.py/") == "src/app.py"
    assert normalize_path("./src/app.py") == "src/app.py"
    files = FileContext()
    files.add_file("/src/a.py", "a")
    assert files.has_file("src/a.py") and files.has_file("src\\a.py")


def test_it_removes_files_and_lists_the_rest_sorted():
    files = FileContext()
    for name in ("b.py", "c.py", "a.py"):
        files.add_file(name, name)
    assert files.remove_file("c.py")
    assert not files.remove_file("c.py")
    assert files.get_files() == ["a.py", "b.py"]


def test_it_keeps_insertion_order_and_updates_in_place():
    files = FileContext()
    for name in ("b.py", "a.py", "c.py"):
        files.add_file(name, "old")
    files.add_file("a.py", "new")
    assert files.items() == [("b.py", "old"), ("a.py", "new"), ("c.py", "old")]


def test_clear_removes_everything():
    files = FileContext()
    files.add_file("a.py", "a")
    files.clear()
    assert files.get_files() == [] and not files.has_file("a.py")


def test_format_for_prompt_includes_path_and_fenced_content():
    files = FileContext()
    files.add_file("a.py", "x = 1")
    files.add_file("b.md", "has ``` inside")
    text = files.format_for_prompt()
    assert "a.py\n```\nx = 1\n```" in text
    assert "b.md\n````\nhas ``` inside\n````" in text


def test_it_counts_tokens_per_file_and_in_total(counter):
    files = FileContext()
    files.add_file("a.py", "x = 1\n" * 50)
    files.add_file("b.py", "y")
    by_file = files.get_tokens_by_file(counter)
    assert by_file["a.py"] > by_file["b.py"] > 0
    assert files.count_tokens(counter) == sum(by_file.values())


def test_refresh_picks_up_edits_and_drops_files_that_vanished(repo):
    files = FileContext(repo)
    files.add_file("src/app.py")
    (repo / "src" / "app.py").write_text("print('changed')\n")
    os.utime(repo / "src" / "app.py", ns=(1, 1))
    changed = files.refresh()
    assert [r.path for r in changed] == ["src/app.py"] and changed[0].ok
    assert files.get_content("src/app.py") == "print('changed')\n"
    (repo / "src" / "app.py").unlink()
    gone = files.refresh()
    assert not gone[0].ok and not files.has_file("src/app.py")
