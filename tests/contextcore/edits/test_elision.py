"""Old text that leaves lines out with `...`: applied piece by piece in one region, or
refused naming the lines; never at a wrong place."""

from __future__ import annotations

from contextcore.edits import EditOp, Outcome, apply_edits

TEXT = (
    "class Cache:\n"
    "    def get(self, key):\n"
    "        value = self.store.get(key)\n"
    "        if value is None:\n"
    "            self.misses += 1\n"
    "        return value\n"
    "\n"
    "    def put(self, key, value):\n"
    "        self.store[key] = value\n"
    "        return value\n"
)


def apply_one(old: str, new: str, text: str = TEXT):
    batch = apply_edits([EditOp("app.py", "replace", old, new)], {"app.py": text})
    return batch.results[0], batch.texts.get("app.py")


def test_it_applies_each_piece_and_keeps_the_lines_left_out() -> None:
    old = "    def get(self, key):\n        ...\n        return value\n"
    new = "    def get(self, key, default=None):\n        ...\n        return value or default\n"
    result, after = apply_one(old, new)
    assert (result.outcome, result.pass_name, result.line) == (Outcome.APPLIED, "elided", 2)
    expected = TEXT.replace("get(self, key):", "get(self, key, default=None):")
    assert after == expected.replace(
        "        return value\n\n", "        return value or default\n\n"
    )


def test_a_comment_marker_in_the_new_text_stands_for_the_same_lines() -> None:
    old = "    def put(self, key, value):\n        # ...\n        return value\n"
    new = "    def put(self, key, value):\n        # ... existing code ...\n        return None\n"
    result, after = apply_one(old, new)
    assert after == TEXT[: TEXT.rindex("return value")] + "return None\n"


def test_it_applies_pieces_quoted_with_another_indentation() -> None:
    old = "def put(self, key, value):\n    ...\n    return value\n"
    new = "def put(self, key, value):\n    ...\n    return self\n"
    result, after = apply_one(old, new)
    assert (result.outcome, after) == (
        Outcome.APPLIED,
        TEXT[: TEXT.rindex("return")] + "return self\n",
    )


def test_it_refuses_pieces_that_match_in_two_regions_naming_them() -> None:
    text = TEXT + "\n    def get(self, key):\n        log(key)\n        return value\n"
    old = "    def get(self, key):\n        ...\n        return value\n"
    result, after = apply_one(old, old.replace("return value", "return 1"), text)
    assert (result.outcome, after, result.matches) == (Outcome.FAILED, None, (2, 12))
    assert "more than one region (lines 2–6, 12–14)" in result.reason


def test_it_refuses_pieces_that_are_not_in_order() -> None:
    old = "        self.store[key] = value\n        ...\n        if value is None:\n"
    result, after = apply_one(old, old.replace("if value", "if not value"))
    assert (result.outcome, after) == (Outcome.FAILED, None)
    assert (
        "not in that order within one region (part 1 at line 9; part 2 at line 4)" in result.reason
    )


def test_it_refuses_a_piece_that_is_not_in_the_file_with_its_closest_lines() -> None:
    old = "    def get(self, key):\n        ...\n        return valu\n"
    result, after = apply_one(old, old.replace("valu", "v"))
    assert (result.outcome, after) == (Outcome.FAILED, None)
    assert "its line 3 were not found as whole lines" in result.reason
    assert "    6 |         return value" in result.closest


def test_it_refuses_a_new_text_that_leaves_lines_out_at_other_places() -> None:
    old = "    def get(self, key):\n        ...\n        return value\n"
    new = "    def get(self, key):\n        ...\n        x = 1\n        ...\n        return value\n"
    result, after = apply_one(old, new)
    assert (result.outcome, after) == (Outcome.FAILED, None)
    assert "at 1 place (line 2 of it), but the new text does so at 2 places" in result.reason


def test_it_refuses_new_lines_next_to_a_leading_marker() -> None:
    old = "    ...\n        return value\n"
    new = "    import os\n    ...\n        return value\n"
    result, after = apply_one(old, new)
    assert (result.outcome, after) == (Outcome.FAILED, None)
    assert "quote the line they go next to" in result.reason


def test_it_refuses_a_last_piece_that_stands_twice_after_the_first() -> None:
    text = "def f():\n    a()\n    done()\n    b()\n    done()\n"
    old = "def f():\n    ...\n    done()\n"
    result, after = apply_one(old, old.replace("done()", "end()"), text)
    assert (result.outcome, after, result.matches) == (Outcome.FAILED, None, (1,))
    assert "(lines 1–3, 1–5)" in result.reason


def test_a_block_closed_by_the_next_definition_is_one_region() -> None:
    text = "def f(x):\n    a = 1\n    return a\n\ndef g():\n    return a\n"
    old = "def f(x):\n    ...\n    return a\n"
    result, after = apply_one(old, old.replace("return a", "return -a"), text)
    assert (result.outcome, after) == (
        Outcome.APPLIED,
        text.replace("    return a\n\n", "    return -a\n\n"),
    )


def test_it_applies_pieces_that_leave_out_statements_of_the_same_block() -> None:
    text = "def f():\n    a = 1\n    b = 2\n    c = 3\n    return a\n"
    old = "    a = 1\n    # ...\n    return a\n"
    result, after = apply_one(old, "    a = 0\n    # ...\n    return a\n", text)
    assert (result.outcome, after) == (Outcome.APPLIED, text.replace("a = 1", "a = 0"))


def test_an_elided_edit_already_in_a_file_the_model_did_not_see_is_already_applied() -> None:
    old = "    def put(self, key, value):\n        ...\n        return valu\n"
    new = "    def put(self, key, value):\n        ...\n        return value\n"
    result, after = apply_one(old, new)
    assert (result.outcome, after) == (Outcome.ALREADY_APPLIED, None)


def test_a_blank_line_the_new_text_ends_with_is_kept() -> None:
    old = "    def get(self, key):\n        ...\n        return value\n"
    new = "    def get(self, key):\n        ...\n        return value\n\n"
    result, after = apply_one(old, new)
    assert after == TEXT.replace("return value\n\n", "return value\n\n\n", 1)


def test_a_literal_dots_line_the_file_holds_is_text_not_an_elision() -> None:
    # The docstring's own `...` line is matched as text: cut there, its closing quotes would
    # stand twice in the function and the edit was refused as ambiguous.
    text = (
        "def loop(seq):\n"
        "    items = list(seq)\n"
        '    """Loop over it.\n\n    ...\n    """\n'
        '    query = """\n    select 1\n    """\n'
        "    return query\n"
    )
    old = 'def loop(seq):\n    ...\n    """Loop over it.\n\n    ...\n    """\n'
    result, after = apply_one(old, old.replace("Loop over", "Loop once over"), text)
    assert (result.outcome, result.pass_name) == (Outcome.APPLIED, "elided")
    assert after == text.replace("Loop over", "Loop once over")
