"""The edits benchmark's plumbing: the corpus, the judging, aider's subprocess, the table
(never timings)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from acdc.bench import main
from bench.edits import aider_runner as edits_aider
from bench.edits.builder import apply_splice, sha
from bench.edits.edits_bench import Verdict, acdc, first_occurrence, judge, load

FAKE_CODER = """
DEFAULT_FENCE = ("```", "```")


def do_replace(fname, content, before_text, after_text, fence=None):
    if fence is None:
        raise TypeError("aider needs a fence")
    if content is None or before_text not in content:
        return None
    return content.replace(before_text, after_text, 1)
"""


@pytest.fixture
def fake_aider(tmp_path) -> Path:
    """An interpreter whose `aider` is a stand-in (first occurrence): aider is the edge."""
    package = tmp_path / "site" / "aider"
    (package / "coders").mkdir(parents=True)
    (package / "__init__.py").write_text('__version__ = "0.0-stand-in"\n')
    (package / "coders" / "__init__.py").write_text("")
    (package / "coders" / "editblock_coder.py").write_text(FAKE_CODER)
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nPYTHONPATH="{package.parent}" exec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    return python


def test_the_corpus_holds_every_shape_each_with_its_expectation() -> None:
    sources, cases = load()
    shapes = Counter(case["shape"] for case in cases)
    assert len(cases) >= 500 and min(shapes.values()) >= 5
    assert len({case["id"] for case in cases}) == len(cases)
    for case in cases:
        disk = apply_splice(sources[(case["file"], case["variant"])], case["splice"])
        if case["expected"] != "applied":
            assert case["expected_sha256"] == sha(disk), case["id"]
        else:
            assert case["expected_sha256"] != sha(disk), case["id"]
        assert case["op"]["old_text"], case["id"]


def test_the_cases_that_went_wrong_in_use_are_in_the_corpus_and_come_out_right() -> None:
    # Issue 42: a non-breaking space in a comment, the model's curly quotes in code; a
    # docstring's literal `...` line quoted after a real elision.
    sources, cases = load()
    reported = [case for case in cases if case["shape"] == "reported"]
    typographic = [case for case in reported if "\u2019" in case["op"]["old_text"]]
    assert len(typographic) >= 3
    assert all("\u00a0" in case["op"]["old_text"] for case in typographic)
    assert any("    ...\n" in case["op"]["old_text"] for case in reported)
    for case in reported:
        disk = apply_splice(sources[(case["file"], case["variant"])], case["splice"])
        assert judge(case, disk, acdc(case, disk, None)) == "right", case["id"]


def test_the_real_history_cases_name_the_commit_they_come_from() -> None:
    _, cases = load()
    real = [c for c in cases if c["shape"].startswith(("real:", "token split:"))]
    assert len(real) >= 300
    repositories = Counter(c["origin"]["repository"] for c in real)
    assert set(repositories) == {"pallets/flask", "encode/starlette"}
    assert all(
        len(c["origin"]["commit"]) == 40 and c["file"].endswith(c["origin"]["commit"][:10])
        for c in real
    )


def test_a_first_occurrence_applied_where_the_model_did_not_mean_is_wrong() -> None:
    case = {
        "file": "a.py",
        "op": {"path": "a.py", "old_text": "x\n", "new_text": "y\n"},
        "expected": "refused",
        "intended_sha256": sha("x\ny\n"),
    }
    verdict = first_occurrence(case, "x\nx\n", None)
    assert (verdict.after, judge(case, "x\nx\n", verdict)) == ("y\nx\n", "wrong")
    assert judge(case, "x\nx\n", Verdict("x\ny\n", True, False)) == "right"
    assert judge(case, "x\nx\n", Verdict("x\nx\n", False, True)) == "refused-right"


def case(id: str, old: str, new: str, path: str = "a.py") -> dict:
    return {"id": id, "file": "a.py", "op": {"path": path, "old_text": old, "new_text": new}}


def test_aider_runs_once_in_its_own_interpreter_on_what_aider_reads(fake_aider) -> None:
    jobs = [
        (case("found", "x = 1\n", "x = 2\n"), "a\r\nx = 1\r\n"),
        (case("elsewhere", "x = 1\n", "x = 3\n", path="src/a.py"), "x = 1\n"),
        (case("missing", "y = 1\n", "y = 2\n"), "x = 1\n"),
    ]
    ran = edits_aider.run(fake_aider, jobs)
    assert ran.version == "0.0-stand-in"
    # read with universal newlines, its CRLF put back; a wrong path tried on the chat's file
    assert ran.afters == {"found": "a\r\nx = 2\r\n", "elsewhere": "x = 3\n", "missing": None}


def test_an_interpreter_that_cannot_run_aider_says_why(tmp_path) -> None:
    with pytest.raises(edits_aider.AiderUnavailable, match="exited with 1: ModuleNotFoundError"):
        edits_aider.run(Path(sys.executable), [(case("a", "x", "y"), "x\n")])
    with pytest.raises(edits_aider.AiderUnavailable, match="No such file"):
        edits_aider.run(tmp_path / "nowhere" / "python", [(case("a", "x", "y"), "x\n")])


def test_bench_edits_quick_writes_all_three_matchers_and_every_shape(tmp_path, capsys, fake_aider):
    out = tmp_path / "out"
    assert main(["edits", "--quick", "--out", str(out), "--aider", str(fake_aider)]) == 0
    table = (out / "edits.md").read_text()
    assert table in capsys.readouterr().out and "Machine: " in table
    assert "| exact text, first occurrence |" in table and "| ambiguous |" in table
    assert "| aider's SEARCH/REPLACE matcher |" in table and "aider-chat 0.0-stand-in" in table
    assert (
        "| real: elided with a bare ... |" in table
        and "| **all real history and token splits** |" in table
    )
    data = json.loads((out / "edits.json").read_text())
    assert data["stats"]["acdc"]["cases"] == data["stats"]["aider"]["cases"] > 0
    assert data["stats"]["acdc"]["cases"] == data["stats"]["plain"]["cases"]
    assert data["tokens"]["carried"] < data["tokens"]["whole_file"]


def test_bench_edits_without_aider_says_so_in_its_column(tmp_path) -> None:
    out = tmp_path / "out"
    assert main(["edits", "--quick", "--out", str(out), "--aider", str(tmp_path / "none")]) == 0
    table = (out / "edits.md").read_text()
    assert "| aider's SEARCH/REPLACE matcher (not run: " in table
    assert "aider" not in json.loads((out / "edits.json").read_text())["stats"]
