"""The matcher's passes: each places an edit its stricter passes miss, and only once.

Every tolerant case is run twice: with all passes (it applies, by that pass) and without
that one pass (it fails and changes nothing), so each test shows the pass it is about.
"""

from __future__ import annotations

from contextcore.edits import PASSES, EditOp, Outcome, apply_edits


def replace(old: str, new: str, **fields) -> EditOp:
    return EditOp("app.py", "replace", old, new, **fields)


def apply_one(op: EditOp, text: str, passes=PASSES):
    batch = apply_edits([op], {"app.py": text}, passes=passes)
    return batch.results[0], batch.texts.get("app.py")


def without(name: str) -> tuple[str, ...]:
    return tuple(p for p in PASSES if p != name)


def assert_needs_pass(name: str, op: EditOp, text: str, expected: str) -> None:
    result, after = apply_one(op, text)
    assert (result.outcome, result.pass_name, after) == (Outcome.APPLIED, name, expected)
    result, after = apply_one(op, text, passes=without(name))
    assert (result.outcome, after) == (Outcome.FAILED, None)


def test_it_replaces_an_exact_unique_match_there_and_nowhere_else() -> None:
    text = "def a():\n    return 1\n\ndef b():\n    return 2\n"
    result, after = apply_one(replace("    return 2\n", "    return 3\n"), text)
    assert after == "def a():\n    return 1\n\ndef b():\n    return 3\n"
    assert (result.pass_name, result.line, result.added, result.removed) == ("exact", 5, 1, 1)


def test_it_refuses_two_exact_matches_naming_both_lines_and_changes_nothing() -> None:
    text = "x = 1\ny = 2\nx = 1\n"
    result, after = apply_one(replace("x = 1", "x = 9"), text)
    assert (result.outcome, after, result.matches) == (Outcome.FAILED, None, (1, 3))
    assert "2 places" in result.reason and "lines 1, 3" in result.reason
    assert "replace_all" in result.reason


def test_it_replaces_every_match_with_replace_all() -> None:
    result, after = apply_one(replace("x = 1", "x = 9", replace_all=True), "x = 1\ny\nx = 1\n")
    assert (result.outcome, after) == (Outcome.APPLIED, "x = 9\ny\nx = 9\n")
    assert (result.added, result.removed) == (2, 2)


def test_it_refuses_two_matches_under_a_tolerant_pass_too() -> None:
    text = "if a:\n    go()\nif b:\n        go()\n"
    result, after = apply_one(replace("\tgo()\n", "\tstop()\n"), text)
    assert (result.outcome, after, result.matches) == (Outcome.FAILED, None, (2, 4))
    assert "ignoring" in result.reason


def test_it_matches_lines_whose_trailing_whitespace_differs() -> None:
    text = "a = 1   \nb = 2\t\nc = 3\n"
    op = replace("a = 1\nb = 2\n", "a = 1\nb = 20\n")
    assert_needs_pass("trailing_whitespace", op, text, "a = 1   \nb = 20\nc = 3\n")


def test_it_matches_a_crlf_file_and_keeps_its_crlf_endings() -> None:
    text = "one\r\ntwo\r\nthree\r\n"
    op = replace("one\ntwo\n", "one\n2\nmore\n")
    assert_needs_pass("line_endings", op, text, "one\r\n2\r\nmore\r\nthree\r\n")


def test_it_reindents_the_replacement_by_the_uniform_offset_it_matched() -> None:
    text = "class A:\n    def f(self):\n        return 1\n"
    op = replace("def f(self):\n    return 1\n", "def f(self):\n    if x:\n        return 2\n")
    expected = "class A:\n    def f(self):\n        if x:\n            return 2\n"
    assert_needs_pass("indentation", op, text, expected)


def test_it_removes_an_indentation_the_model_added() -> None:
    text = "def f():\n    return 1\n"
    op = replace("    def f():\n        return 1\n", "    def f():\n        return 2\n")
    assert_needs_pass("indentation", op, text, "def f():\n    return 2\n")


def test_it_refuses_an_indentation_offset_that_is_not_uniform() -> None:
    text = "def f():\n    a = 1\n    b = 2\n"
    result, after = apply_one(replace("def f():\n  a = 1\n      b = 2\n", "x\n"), text)
    assert (result.outcome, after) == (Outcome.FAILED, None)


def test_it_matches_a_tab_indented_file_from_spaces_and_writes_tabs() -> None:
    text = "func main() {\n\tif ok {\n\t\trun()\n\t}\n}\n"
    op = replace("    if ok {\n        run()\n", "    if ok {\n        run()\n        log()\n")
    expected = "func main() {\n\tif ok {\n\t\trun()\n\t\tlog()\n\t}\n}\n"
    assert_needs_pass("tabs", op, text, expected)


def test_it_matches_curly_quotes_and_dashes_and_writes_ascii_into_an_ascii_file() -> None:
    text = 'msg = "don\'t stop"  # a - b\nnext = 1\n'
    op = replace("msg = “don’t stop”  # a — b\n", "msg = “don’t go”  # a — b\n")
    expected = 'msg = "don\'t go"  # a - b\nnext = 1\n'
    assert_needs_pass("punctuation", op, text, expected)


def test_it_matches_a_non_breaking_space_the_model_wrote() -> None:
    text = "x = 1\ny = 2\n"
    assert_needs_pass("punctuation", replace("x\u00a0= 1\n", "x = 3\n"), text, "x = 3\ny = 2\n")


def test_it_keeps_the_files_own_bytes_on_lines_the_model_did_not_change() -> None:
    text = "a = 1   \n\tb = 2\nc = 3\n"
    result, after = apply_one(replace("a = 1\n\tb = 2\nc = 3\n", "a = 1\n\tb = 2\nc = 4\n"), text)
    assert after == "a = 1   \n\tb = 2\nc = 4\n"


def test_it_never_applies_text_that_is_only_similar() -> None:
    text = "def total(items):\n    return sum(items)\n"
    result, after = apply_one(replace("def totals(items):\n    return sum(item)\n", "x\n"), text)
    assert (result.outcome, after) == (Outcome.FAILED, None)
    assert "    1 | def total(items):" in result.closest
