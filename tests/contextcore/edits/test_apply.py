"""Applying batches of ops: already applied, stale bases, create, delete, the file's shape."""

from __future__ import annotations

from contextcore.edits import (
    EditOp,
    Outcome,
    apply_edits,
    failure_report,
    op_from_tool,
    parse_edit_blocks,
    result_line,
    text_sha256,
)


def replace(old: str, new: str, path: str = "app.py", **fields) -> EditOp:
    return EditOp(path, "replace", old, new, **fields)


def test_it_reports_an_edit_whose_new_text_is_there_as_already_applied() -> None:
    batch = apply_edits([replace("x = 1\n", "x = 2\n")], {"app.py": "a\nx = 2\n"})
    assert batch.results[0].outcome is Outcome.ALREADY_APPLIED
    assert batch.texts == {} and all(r.ok for r in batch.results)


def test_it_applies_a_stale_edit_whose_old_text_still_matches_once() -> None:
    seen = "def f():\n    return 1\n"
    current = "import os\n\ndef f():\n    return 1\n"
    op = replace("    return 1\n", "    return 2\n", base_sha256=text_sha256(seen))
    batch = apply_edits([op], {"app.py": current}, seen={"app.py": seen})
    result = batch.results[0]
    assert (result.outcome, result.reanchored, result.line) == (Outcome.APPLIED, True, 4)
    assert batch.texts["app.py"] == "import os\n\ndef f():\n    return 2\n"


def test_it_makes_a_stale_edit_whose_old_text_moved_on_a_conflict() -> None:
    seen = "def f():\n    return 1\n"
    current = "def f():\n    return 10\n"
    op = replace("    return 1\n", "    return 2\n", base_sha256=text_sha256(seen))
    batch = apply_edits([op], {"app.py": current}, seen={"app.py": seen})
    result = batch.results[0]
    assert (result.outcome, batch.texts) == (Outcome.CONFLICT, {})
    assert "changed since the model read it" in result.reason
    assert "    2 |     return 10" in result.closest


def test_it_fails_rather_than_conflicts_when_the_old_text_never_matched() -> None:
    seen = "def f():\n    return 1\n"
    op = replace("    return 7\n", "    return 2\n", base_sha256=text_sha256(seen))
    batch = apply_edits([op], {"app.py": seen + "\n"}, seen={"app.py": seen})
    assert batch.results[0].outcome is Outcome.FAILED


def test_it_does_not_call_a_current_base_stale() -> None:
    text = "a\n"
    op = replace("a\n", "b\n", base_sha256=text_sha256(text))
    assert apply_edits([op], {"app.py": text}).results[0].reanchored is False


def test_it_creates_a_new_file() -> None:
    op = op_from_tool("write_file", {"path": "new.py", "content": "x = 1\n"})
    batch = apply_edits([op], {})
    assert (batch.texts, batch.results[0].added) == ({"new.py": "x = 1\n"}, 1)
    assert result_line(batch.results[0]) == "created: new.py, +1 −0"


def test_it_refuses_to_create_over_an_existing_file_from_an_empty_search() -> None:
    op = EditOp("app.py", "create", new_text="y\n", source="block", origin_line=3)
    batch = apply_edits([op], {"app.py": "x\n"})
    assert (batch.results[0].outcome, batch.texts) == (Outcome.FAILED, {})
    assert "already exists" in batch.results[0].reason


def test_it_overwrites_with_write_file_keeping_the_bom_and_line_endings() -> None:
    op = op_from_tool("write_file", {"path": "app.py", "content": "b\nc"})
    batch = apply_edits([op], {"app.py": "\ufeffa\r\n"})
    assert batch.texts == {"app.py": "\ufeffb\r\nc\r\n"}


def test_it_refuses_to_overwrite_a_file_changed_since_the_model_read_it() -> None:
    op = EditOp("app.py", "create", new_text="b\n", overwrite=True, base_sha256=text_sha256("a\n"))
    batch = apply_edits([op], {"app.py": "a\nmine\n"})
    assert (batch.results[0].outcome, batch.texts) == (Outcome.CONFLICT, {})


def test_it_deletes_a_file_and_calls_a_missing_one_already_deleted() -> None:
    batch = apply_edits([EditOp.delete("app.py"), EditOp.delete("gone.py")], {"app.py": "a\nb\n"})
    assert batch.texts == {"app.py": None}
    assert [r.outcome for r in batch.results] == [Outcome.APPLIED, Outcome.ALREADY_APPLIED]
    assert batch.results[0].removed == 2


def test_it_keeps_a_byte_order_mark() -> None:
    batch = apply_edits([replace("a = 1", "a = 2")], {"app.py": "\ufeffa = 1\n"})
    assert batch.texts["app.py"] == "\ufeffa = 2\n"


def test_it_keeps_a_missing_final_newline_when_the_model_adds_one() -> None:
    batch = apply_edits([replace("b", "c\n")], {"app.py": "a\nb"})
    assert batch.texts["app.py"] == "a\nc"


def test_it_keeps_the_final_newline_when_the_model_drops_it() -> None:
    batch = apply_edits([replace("a\nb\n", "a\nc")], {"app.py": "a\nb\n"})
    assert batch.texts["app.py"] == "a\nc\n"


def test_it_refuses_elided_old_text_whose_new_text_does_not_elide_the_same_lines() -> None:
    text = "def f():\n    a = 1\n    b = 2\n    return a + b\n"
    op = replace("def f():\n    ...\n    return a + b\n", "def f():\n    return 0\n")
    batch = apply_edits([op], {"app.py": text})
    assert (batch.results[0].outcome, batch.texts) == (Outcome.FAILED, {})
    assert "(line 2 of it), but the new text does so nowhere" in batch.results[0].reason


def test_it_applies_old_text_whose_dots_are_really_in_the_file() -> None:
    text = "class P(Protocol):\n    def f(self) -> int:\n        ...\n"
    op = replace("    def f(self) -> int:\n        ...\n", "    def f(self) -> str:\n        ...\n")
    assert apply_edits([op], {"app.py": text}).results[0].outcome is Outcome.APPLIED


def test_it_refuses_new_text_that_stands_for_existing_code_with_a_comment() -> None:
    op = replace("def f():\n    a = 1\n", "def f():\n    # ... existing code ...\n    b = 2\n")
    batch = apply_edits([op], {"app.py": "def f():\n    a = 1\n"})
    assert (batch.results[0].outcome, batch.texts) == (Outcome.FAILED, {})
    assert "existing code" in batch.results[0].reason


def test_it_names_a_file_of_the_same_name_when_the_path_is_wrong() -> None:
    batch = apply_edits([replace("a", "b", path="main.py")], {"src/app/main.py": "a\n"})
    assert "src/app/main.py" in batch.results[0].reason


def test_it_applies_ops_on_one_file_in_order_and_reports_the_others_in_a_failure() -> None:
    ops = [replace("a = 1", "a = 2"), replace("zzz", "y"), replace("a = 2", "a = 3")]
    batch = apply_edits(ops, {"app.py": "a = 1\n"})
    assert batch.texts["app.py"] == "a = 3\n"
    report = failure_report(batch.results)
    assert report.startswith("Edit 2 of 3, app.py (edit_file), failed: the old text was not")
    assert "These edits of the same batch applied: edit 1 (app.py), edit 3 (app.py)." in report


def test_it_says_in_a_result_line_what_an_edit_did() -> None:
    batch = apply_edits([replace("a\n", "b\nc\n")], {"app.py": "a\n"})
    assert result_line(batch.results[0], (3, 4)) == "applied: app.py v3→v4, +2 −1"


def test_it_does_not_repeat_an_edit_whose_new_text_holds_the_old_text_and_is_there() -> None:
    text = "import os\nimport sys\n\nprint(1)\n"
    batch = apply_edits([replace("import os\n", "import os\nimport sys\n")], {"app.py": text})
    assert (batch.results[0].outcome, batch.texts) == (Outcome.ALREADY_APPLIED, {})


def test_it_still_applies_an_edit_that_repeats_a_line_on_purpose() -> None:
    batch = apply_edits([replace("x()\n", "x()\nx()\n")], {"app.py": "x()\ny()\n"})
    assert batch.texts["app.py"] == "x()\nx()\ny()\n"


def test_it_adds_no_line_when_only_the_new_text_ends_with_a_line_break() -> None:
    batch = apply_edits([replace("a = 1", "a = 2\n")], {"app.py": "a = 1\nb = 2\n"})
    assert batch.texts["app.py"] == "a = 2\nb = 2\n"


def test_it_takes_a_file_as_changed_when_its_text_is_not_the_text_the_model_saw() -> None:
    seen, current = "a = 1\nb = 2\n", "a = 1\nb = 3\n"
    batch = apply_edits([replace("b = 2\n", "b = 4\n")], {"app.py": current}, seen={"app.py": seen})
    assert batch.results[0].outcome is Outcome.CONFLICT


def test_it_tells_the_model_which_blocks_it_could_not_read() -> None:
    blocks = parse_edit_blocks(
        "a.py\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n\n<<<<<<< SEARCH\n"
    )
    batch = apply_edits([b.op for b in blocks if b.op], {"a.py": "x\n"})
    report = failure_report(batch.results, [b for b in blocks if b.error])
    assert report.startswith("The edit block at line 8 of the reply was not read: the block has")
    assert report.endswith("These edits of the same batch applied: edit 1 (a.py).")
