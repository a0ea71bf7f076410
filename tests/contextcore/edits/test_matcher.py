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


def test_it_does_not_match_a_number_inside_a_longer_number() -> None:
    result, after = apply_one(replace("LIMIT = 100", "LIMIT = 200"), "LIMIT = 1000\n")
    assert (result.outcome, after) == (Outcome.FAILED, None)
    assert "line 1 only as part of a longer word or number" in result.reason


def test_it_does_not_match_a_name_inside_a_longer_name() -> None:
    text = "from flask import jsonify\nx = 1\n"
    result, after = apply_one(replace("from flask import json", "from flask import j"), text)
    assert (result.outcome, after) == (Outcome.FAILED, None)
    assert "line 1 only as part of a longer word" in result.reason


def test_it_takes_the_clean_match_where_a_split_one_comes_first() -> None:
    text = "LIMIT = 1000\nLIMIT = 100\n"
    result, after = apply_one(replace("LIMIT = 100", "LIMIT = 200"), text)
    assert (result.outcome, result.line, after) == (
        Outcome.APPLIED,
        2,
        "LIMIT = 1000\nLIMIT = 200\n",
    )


def test_it_refuses_a_text_that_starts_inside_a_word() -> None:
    result, after = apply_one(replace("ize(x)", "ise(x)"), "normalize(x)\n")
    assert (result.outcome, after) == (Outcome.FAILED, None)


def test_it_replaces_every_clean_match_and_no_split_one_with_replace_all() -> None:
    text = "n = 10\nm = 100\nk = 10\n"
    result, after = apply_one(replace("= 10", "= 11", replace_all=True), text)
    assert (result.outcome, after) == (Outcome.APPLIED, "n = 11\nm = 100\nk = 11\n")


def test_a_tolerant_pass_never_matches_inside_a_line_either() -> None:
    text = "    LIMIT = 1000  \n"
    result, after = apply_one(replace("  LIMIT = 100\n", "  LIMIT = 5\n"), text)
    assert (result.outcome, after) == (Outcome.FAILED, None)


def test_it_still_matches_text_that_ends_at_punctuation_or_a_space() -> None:
    result, after = apply_one(replace("f(a", "f(b"), "x = f(a)\n")
    assert (result.outcome, after) == (Outcome.APPLIED, "x = f(b)\n")


def test_an_indented_line_does_not_match_inside_a_deeper_indented_one() -> None:
    text = "def f(x):\n    if x:\n        return None\n    return None\n"
    result, after = apply_one(replace("    return None\n", "    return x\n"), text)
    assert (result.outcome, result.line) == (Outcome.APPLIED, 4)
    assert after == "def f(x):\n    if x:\n        return None\n    return x\n"


def test_a_line_quoted_without_its_indentation_is_deleted_whole() -> None:
    text = "def f(path):\n    url = parse(path)\n    return path\n"
    result, after = apply_one(replace("url = parse(path)\n", ""), text)
    assert (result.outcome, result.pass_name) == (Outcome.APPLIED, "indentation")
    assert after == "def f(path):\n    return path\n"


def test_lines_added_under_a_line_quoted_without_its_indentation_get_its_indentation() -> None:
    text = "def f(path):\n    url = parse(path)\n    return url\n"
    result, after = apply_one(replace("url = parse(path)\n", "url = parse(path)\nlog(url)\n"), text)
    expected = "def f(path):\n    url = parse(path)\n    log(url)\n    return url\n"
    assert (result.pass_name, after) == ("indentation", expected)


def test_a_text_found_only_inside_a_longer_number_is_not_looked_for_elsewhere() -> None:
    text = "def f():\n    code == 1000\n\ndef g():\n        code == 100\n"
    result, after = apply_one(replace("    code == 100", "    code == 100  # ok"), text)
    assert (result.outcome, after) == (Outcome.FAILED, None)
    assert "at line 2 only as part of a longer word or number" in result.reason


def test_a_quoted_blank_first_line_is_the_place_with_a_blank_line() -> None:
    text = "a = 1\n    run()\n    done()\n\n    run()\n    done()\n"
    result, after = apply_one(
        replace("\n    run()\n    done()\n", "\n    run()\n    end()\n"), text
    )
    assert (result.outcome, result.line) == (Outcome.APPLIED, 4)
    assert after == "a = 1\n    run()\n    done()\n\n    run()\n    end()\n"


def test_a_line_quoted_with_too_little_indentation_still_reaches_the_indentation_pass() -> None:
    text = "if a:\n    if b:\n        x = 1\n"
    result, after = apply_one(replace("    x = 1\n", "    x = 1\n    y = 2\n"), text)
    assert (result.outcome, result.pass_name) == (Outcome.APPLIED, "indentation")
    assert after == "if a:\n    if b:\n        x = 1\n        y = 2\n"


def test_deleting_the_whole_text_of_a_line_deletes_the_line() -> None:
    text = "a {\n    margin: 0;\n    font: #394D54;\n    color: red;\n}\n"
    result, after = apply_one(replace("font: #394D54;", ""), text)
    assert (result.outcome, after) == (Outcome.APPLIED, "a {\n    margin: 0;\n    color: red;\n}\n")


def test_deleting_whole_lines_quoted_without_the_last_break_deletes_the_lines() -> None:
    text = "import asyncio\nimport logging\nimport traceback\nimport typing\n"
    result, after = apply_one(replace("import logging\nimport traceback", ""), text)
    assert after == "import asyncio\nimport typing\n"


def test_deleting_part_of_a_line_keeps_the_rest() -> None:
    result, after = apply_one(replace(", b=2", ""), "f(a=1, b=2)\n")
    assert after == "f(a=1)\n"


def test_a_line_quoted_without_indentation_that_becomes_several_lines_is_re_indented() -> None:
    text = "def f(self):\n    '''Doc.'''\n    app = self.application\n"
    new = "if self.jar is None:\n    raise RuntimeError('no jar')\napp = self.application"
    result, after = apply_one(replace("app = self.application", new), text)
    expected = (
        "def f(self):\n    '''Doc.'''\n    if self.jar is None:\n"
        "        raise RuntimeError('no jar')\n    app = self.application\n"
    )
    assert (result.pass_name, after) == ("indentation", expected)


def test_a_line_without_indentation_and_the_same_text_inside_code_are_ambiguous() -> None:
    text = "def f(self) -> None:\n    pass\n\ndef g(\n    x,\n    ) -> None:\n    pass\n"
    result, after = apply_one(replace(") -> None:\n", ") -> int:\n"), text)
    assert (result.outcome, after, result.matches) == (Outcome.FAILED, None, (1, 6))


def test_a_typographic_character_in_the_file_keeps_no_curly_quote_of_the_model_in_code() -> None:
    # The file's comment holds a non-breaking space; its code has ASCII quotes. The model
    # quoted the code with curly quotes: they match, and must not be written, neither on the
    # line it changed nor on the line it added; the comment keeps its own character.
    text = "def f(headers):\n    # see\u00a0RFC 7235\n    if 'Authorization' in headers:\n"
    text += "        return 1\n"
    old = (
        "    # see\u00a0RFC 7235\n    if \u2018Authorization\u2019 in headers:\n        return 1\n"
    )
    new = old.replace("headers:", "headers and ok:").replace(
        "return 1\n", "return 1\n    if \u201cCookie\u201d in headers:  # \u2014 sent\u00a0too\n"
    )
    expected = (
        text.replace("headers:", "headers and ok:")
        + '    if "Cookie" in headers:  # - sent\u00a0too\n'
    )
    assert_needs_pass("punctuation", replace(old, new), text, expected)
