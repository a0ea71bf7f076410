"""`acdc bench context --part localization`: the set from a repository's history, the
recall that judges every contestant, BM25's pieces, and one whole run on a tiny repository."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from acdc.bench import main
from bench.context import bm25, fixset
from bench.context.recall import Judge, recall

PARSE = '''"""Parsing of header values."""


def parse_header(value):
    """The parts of a header value, split at semicolons."""
    if value is None:
        return []
    parts = value.split(";")
    cleaned = [part.strip() for part in parts]
    return cleaned


def join_header(parts):
    return "; ".join(parts)
'''
FIXED = PARSE.replace("    if value is None:\n", "    if not value:\n")
MESSAGE = "Fix parse_header on an empty value\n\nAn empty string gave [''] instead of []."


def _commit(root: Path, message: str) -> None:
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@localhost"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", message], check=True)


def _tiny_history(mirrors: Path) -> Path:
    """A repository with one fix commit in its history: a source file and its test."""
    root = mirrors / "acme+tiny" / "repo"
    (root / "tiny").mkdir(parents=True)
    (root / "tests").mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "tiny" / "parse.py").write_text(PARSE)
    for n in range(6):
        body = "".join(f"def helper_{n}_{k}(x):\n    return x * {k}\n\n\n" for k in range(8))
        (root / "tiny" / f"util{n}.py").write_text(body)
    (root / "tests" / "test_parse.py").write_text("def test_it():\n    assert True\n")
    _commit(root, "Add the parser")
    (root / "tiny" / "parse.py").write_text(FIXED)
    (root / "tests" / "test_parse.py").write_text("def test_it():\n    assert 1\n")
    _commit(root, MESSAGE)
    return root


def test_a_fix_commit_becomes_a_case_of_its_source_lines_not_its_tests(tmp_path):
    root = _tiny_history(tmp_path)
    [case] = fixset.build_repo(root, "acme/tiny", (".py",))
    assert case.message == MESSAGE
    assert case.answer == {"tiny/parse.py": [6]}
    parent = ["git", "-C", str(root), "rev-parse", "HEAD^"]
    assert case.parent == subprocess.run(parent, capture_output=True, text=True).stdout.strip()


def test_a_lone_signature_names_a_file_but_does_not_show_it():
    answer = {"tiny/parse.py": [6]}
    sources = {"tiny/parse.py": PARSE}
    outline = Judge.of("tiny/parse.py:\n│def parse_header(value):\n⋮\n│def join_header(parts):")
    assert recall(outline, answer, sources).__dict__ == {"named": 1.0, "shown": 0.0, "lines": 0.0}


def test_a_body_region_shows_the_changed_line_whatever_its_gutter():
    body = "\n".join(f"{n:4}│{line}" for n, line in enumerate(PARSE.splitlines()[3:9], 4))
    judged = recall(Judge.of(body), {"tiny/parse.py": [6]}, {"tiny/parse.py": PARSE})
    assert judged.__dict__ == {"named": 0.0, "shown": 1.0, "lines": 1.0}


def test_a_changed_blank_line_stands_for_the_line_above_it():
    lines = PARSE.splitlines()
    blank = lines.index("", 4) + 1  # the blank line after parse_header's body
    region = Judge.of("\n".join(lines[6:10]))
    judged = recall(region, {"tiny/parse.py": [blank]}, {"tiny/parse.py": PARSE})
    assert judged.lines == 1.0


def test_bm25_puts_the_piece_with_the_messages_words_first_within_the_budget():
    sources = {"a.py": "def unrelated():\n    pass\n", "tiny/parse.py": PARSE}
    [first, *_] = bm25.ranked(MESSAGE, bm25.pieces(sources))
    assert first.path == "tiny/parse.py"
    assert bm25.fill(MESSAGE, sources, 5, len) == ""
    assert bm25.terms("parseHeader_value") == ["parseheader_value", "parse", "header", "value"]


@pytest.mark.django_db(transaction=True)
def test_the_part_reports_acdcs_and_bm25s_recall_on_a_real_history(tmp_path, capsys):
    mirrors = tmp_path / "mirrors"
    _tiny_history(mirrors)
    frozen = tmp_path / "fixes.json"
    fixset.write(fixset.build(mirrors, {"acme/tiny": (".py",)}), frozen)
    out = tmp_path / "out"
    argv = ["context", "--part", "localization", "--set", str(frozen), "--mirrors", str(mirrors)]
    assert main([*argv, "--aider", str(tmp_path / "no-aider"), "--out", str(out)]) == 0
    [row] = json.loads((out / "context-localization.json").read_text())["rows"]
    assert row["tokens"] > 0 and "aider" not in row
    assert set(row["acdc"]) == set(row["bm25"]) == {"named", "shown", "lines"}
    assert row["acdc"]["named"] == 1.0  # the map lists the fixed file
    assert row["bm25"] == {"named": 1.0, "shown": 1.0, "lines": 1.0}
    assert "| acme/tiny | 1 |" in capsys.readouterr().out
