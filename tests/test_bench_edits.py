"""The edits benchmark's plumbing: the corpus, the judging, the table (never timings)."""

from __future__ import annotations

import json
from collections import Counter

from acdc.bench import main
from tests.bench.edits_bench import Verdict, first_occurrence, judge, load
from tests.bench.edits_cases import apply_splice, sha


def test_the_corpus_holds_200_edits_of_every_shape_each_with_its_expectation() -> None:
    sources, cases = load()
    shapes = Counter(case["shape"] for case in cases)
    assert len(cases) >= 200 and min(shapes.values()) >= 10
    for case in cases:
        disk = apply_splice(sources[(case["file"], case["variant"])], case["splice"])
        if case["expected"] != "applied":
            assert case["expected_sha256"] == sha(disk), case["id"]
        assert case["op"]["old_text"], case["id"]


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


def test_bench_edits_quick_writes_both_matchers_and_every_shape(tmp_path, capsys) -> None:
    assert main(["edits", "--quick", "--out", str(tmp_path)]) == 0
    table = (tmp_path / "edits.md").read_text()
    assert table in capsys.readouterr().out and "Machine: " in table
    assert "| exact text, first occurrence |" in table and "| ambiguous |" in table
    data = json.loads((tmp_path / "edits.json").read_text())
    assert data["stats"]["acdc"]["cases"] == data["stats"]["plain"]["cases"] > 0
    assert data["tokens"]["carried"] < data["tokens"]["whole_file"]
