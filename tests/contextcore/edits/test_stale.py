"""Stale edits: the file changed since the model read it, so the edit is a three-way merge
against the text the model saw; and "already applied" only where the new text stands."""

from __future__ import annotations

from contextcore.edits import EditOp, Outcome, apply_edits, text_sha256

SEEN = (
    "STATUS = {\n    'ok': 1,\n}\n\n"
    "HTTP_200_OK = 200\nHTTP_201_CREATED = 201\n\n\n"
    "def f():\n    return 1\n"
)


def replace(old: str, new: str, seen: str = SEEN, **fields) -> EditOp:
    return EditOp("app.py", "replace", old, new, base_sha256=text_sha256(seen), **fields)


def stale(ops: list[EditOp], current: str, seen: str | None = SEEN):
    return apply_edits(ops, {"app.py": current}, seen={"app.py": seen} if seen else None)


def test_a_number_the_person_lengthened_is_a_conflict_never_a_spliced_line() -> None:
    current = SEEN.replace("HTTP_200_OK = 200\n", "HTTP_200_OK = 2000\n")
    batch = stale([replace("HTTP_200_OK = 200", "HTTP_200_OK = 200  # OK")], current)
    result = batch.results[0]
    assert (result.outcome, batch.texts) == (Outcome.CONFLICT, {})
    assert "overlaps this edit at line 5 of the current file" in result.reason
    assert "    5 | HTTP_200_OK = 2000" in result.closest


def test_without_the_seen_text_a_split_number_is_refused_naming_the_line() -> None:
    current = SEEN.replace("HTTP_200_OK = 200\n", "HTTP_200_OK = 2000\n")
    batch = stale([replace("HTTP_200_OK = 200", "HTTP_200_OK = 200  # OK")], current, seen=None)
    result = batch.results[0]
    assert (result.outcome, batch.texts) == (Outcome.CONFLICT, {})
    assert "line 5 only as part of a longer word or number" in result.reason


def test_without_the_seen_text_an_edit_that_still_matches_once_re_anchors() -> None:
    current = "import os\n" + SEEN
    batch = stale([replace("    return 1\n", "    return 2\n")], current, seen=None)
    assert (batch.results[0].outcome, batch.results[0].reanchored) == (Outcome.APPLIED, True)
    assert batch.texts["app.py"] == current.replace("return 1", "return 2")


def test_changes_in_separate_regions_merge() -> None:
    current = SEEN.replace("    'ok': 1,\n", "    'ok': 1,\n    'gone': 2,\n")
    batch = stale(
        [replace("HTTP_201_CREATED = 201\n", "HTTP_201_CREATED = 201  # made\n")], current
    )
    result = batch.results[0]
    assert (result.outcome, result.reanchored, result.line) == (Outcome.APPLIED, True, 7)
    expected = current.replace("= 201\n", "= 201  # made\n")
    assert batch.texts == {"app.py": expected}


def test_an_edit_of_lines_the_person_changed_differently_is_a_conflict() -> None:
    current = SEEN.replace("    return 1\n", "    return 10\n")
    batch = stale([replace("def f():\n    return 1\n", "def f():\n    return 3\n")], current)
    assert (batch.results[0].outcome, batch.texts) == (Outcome.CONFLICT, {})
    assert "   10 |     return 10" in batch.results[0].closest


def test_an_edit_the_person_already_made_is_already_applied() -> None:
    current = SEEN.replace("    return 1\n", "    return 2\n")
    batch = stale([replace("    return 1\n", "    return 2\n")], current)
    assert (batch.results[0].outcome, batch.texts) == (Outcome.ALREADY_APPLIED, {})


def test_several_edits_of_one_stale_file_apply_to_the_seen_text_then_merge_once() -> None:
    current = "# header\n" + SEEN
    ops = [
        replace("HTTP_200_OK = 200\n", "HTTP_200_OK = 200\nHTTP_202 = 202\n"),
        replace("HTTP_202 = 202\n", "HTTP_202_ACCEPTED = 202\n"),
        replace("    return 1\n", "    return 4\n"),
    ]
    batch = stale(ops, current)
    assert [r.outcome for r in batch.results] == [Outcome.APPLIED] * 3
    expected = current.replace("= 200\n", "= 200\nHTTP_202_ACCEPTED = 202\n")
    assert batch.texts == {"app.py": expected.replace("return 1", "return 4")}


def test_one_overlap_makes_every_edit_of_the_merge_a_conflict_and_writes_nothing() -> None:
    current = SEEN.replace("    return 1\n", "    return 10\n")
    ops = [replace("HTTP_200_OK = 200", "HTTP_200_OK = 299"), replace("return 1\n", "return 3\n")]
    batch = stale(ops, current)
    assert ([r.outcome for r in batch.results], batch.texts) == ([Outcome.CONFLICT] * 2, {})


def test_an_edit_quoting_the_current_text_rather_than_the_seen_one_applies_there() -> None:
    current = SEEN.replace("    return 1\n", "    return 10\n")
    batch = stale([replace("    return 10\n", "    return 11\n")], current)
    assert (batch.results[0].outcome, batch.results[0].reanchored) == (Outcome.APPLIED, True)
    assert batch.texts["app.py"] == SEEN.replace("return 1\n", "return 11\n")


def test_a_stale_file_whose_seen_text_is_another_version_is_not_merged_against_it() -> None:
    other = SEEN.replace("return 1", "return 5")
    current = SEEN.replace("HTTP_200_OK = 200\n", "HTTP_200_OK = 2000\n")
    op = replace("HTTP_200_OK = 200", "HTTP_200_OK = 200  # OK")
    batch = apply_edits([op], {"app.py": current}, seen={"app.py": other})
    assert (batch.results[0].outcome, batch.texts) == (Outcome.CONFLICT, {})


def test_a_new_text_that_merely_stands_elsewhere_in_an_unchanged_file_is_not_applied() -> None:
    text = "def a():\n    return x\n\ndef b():\n    return y\n"
    op = replace("    return z\n", "    return x\n", seen=text)
    batch = apply_edits([op], {"app.py": text}, seen={"app.py": text})
    result = batch.results[0]
    assert (result.outcome, batch.texts) == (Outcome.FAILED, {})
    assert "The new text stands at line 2, but the file is the one that was read" in result.reason


def test_a_new_text_found_twice_is_not_already_applied() -> None:
    text = "x = 2\ny = 0\nx = 2\n"
    batch = apply_edits([EditOp("app.py", "replace", "x = 1\n", "x = 2\n")], {"app.py": text})
    assert (batch.results[0].outcome, batch.texts) == (Outcome.FAILED, {})


def test_an_edit_repeated_in_one_batch_is_already_applied_the_second_time() -> None:
    text = "def a():\n    return 1\n"
    op = replace("    return 1\n", "    return 2\n", seen=text)
    batch = apply_edits([op, op], {"app.py": text}, seen={"app.py": text})
    assert [r.outcome for r in batch.results] == [Outcome.APPLIED, Outcome.ALREADY_APPLIED]
    assert batch.texts == {"app.py": "def a():\n    return 2\n"}


def test_a_change_to_a_line_the_edit_only_quoted_merges_where_re_anchoring_cannot() -> None:
    current = SEEN.replace("HTTP_200_OK = 200\n", "HTTP_200_OK = 200  # the person's\n")
    old = "HTTP_200_OK = 200\nHTTP_201_CREATED = 201\n\n\ndef f():\n    return 1\n"
    batch = stale([replace(old, old.replace("return 1", "return 2"))], current)
    assert (batch.results[0].outcome, batch.results[0].line) == (Outcome.APPLIED, 5)
    assert batch.texts == {"app.py": current.replace("return 1", "return 2")}


def test_the_same_change_beside_another_change_of_the_person_is_already_applied() -> None:
    current = SEEN.replace("= 200\n", "= 200  # mine\n").replace("return 1", "return 2")
    old = "HTTP_200_OK = 200\nHTTP_201_CREATED = 201\n\n\ndef f():\n    return 1\n"
    batch = stale([replace(old, old.replace("return 1", "return 2"))], current)
    assert (batch.results[0].outcome, batch.texts) == (Outcome.ALREADY_APPLIED, {})


def test_without_the_seen_text_a_match_by_a_tolerant_pass_does_not_re_anchor() -> None:
    seen = 'def f():\n    if x:\n        return {"status": 200}\n    return {"status": 200}\n'
    current = seen.replace('        return {"status": 200}', '        return {"status": 2000}')
    op = replace('        return {"status": 200}\n', '        return {"status": 201}\n', seen=seen)
    batch = apply_edits([op], {"app.py": current})
    assert (batch.results[0].outcome, batch.texts) == (Outcome.CONFLICT, {})
    assert "only ignoring a uniform indentation offset" in batch.results[0].reason


def test_without_the_seen_text_a_match_beside_a_split_one_does_not_re_anchor() -> None:
    seen = "LIMIT = 100\n\ndef f():\n    LIMIT = 100\n"
    current = "LIMIT = 1000\n\ndef f():\n    LIMIT = 100\n"
    op = replace("LIMIT = 100", "LIMIT = 5", seen=seen)
    batch = apply_edits([op], {"app.py": current})
    assert (batch.results[0].outcome, batch.texts) == (Outcome.CONFLICT, {})
