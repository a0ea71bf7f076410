"""Hypothesis properties of the matcher: an exact unique edit lands exactly there, never
inside a word or number."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from contextcore.edits import EditOp, Outcome, apply_edits, parse_edit_blocks
from contextcore.edits.matcher import splits_token

SETTINGS = settings(max_examples=100, deadline=None)
texts = st.text(alphabet="ab \t\n\r“-", max_size=120)


@SETTINGS
@given(texts, texts, st.text(alphabet="xy\nz", min_size=1, max_size=20), texts)
def test_an_exact_unique_old_text_is_replaced_exactly_there(before, after, old, new) -> None:
    # (an empty new text deletes a whole line's text with its line: another property)
    old, new = old.rstrip("\n") or "x", new.replace("\n", "").replace("\r", "") or "y"
    text = before + old + after
    if text.count(old) != 1 or old == new:
        return
    batch = apply_edits([EditOp("f", "replace", old, new)], {"f": text})
    if splits_token(text, len(before), len(before) + len(old)):
        assert (batch.results[0].outcome is Outcome.APPLIED, batch.texts) == (False, {})
        return
    if _not_exact(text, len(before), old):
        return  # whole lines quoted from another column: the indentation pass's
    assert (batch.results[0].outcome, batch.results[0].pass_name) == (Outcome.APPLIED, "exact")
    assert batch.texts["f"] == before + new + after


def _places(text: str, old: str) -> list[int]:
    return [i for i in range(len(text)) if text.startswith(old, i)]


def _not_exact(text: str, at: int, old: str) -> bool:
    """A place the exact pass leaves to others: inside a word, or whole lines quoted
    without the indentation they have there."""
    line = text[text.rfind("\n", 0, at) + 1 : at]
    unindented = "\n" in old and old.split("\n")[0].strip() and line and not line.strip(" \t")
    return splits_token(text, at, at + len(old)) or bool(unindented)


@SETTINGS
@given(
    texts,
    st.text(alphabet="ab1_\n", min_size=1, max_size=6),
    texts,
    st.text("xz", min_size=1, max_size=3),
)
def test_an_applied_edit_never_starts_or_ends_inside_a_word(before, old, after, new) -> None:
    text = before + old + after + " " + old + "b"
    batch = apply_edits([EditOp("f", "replace", old, new)], {"f": text})
    result = batch.results[0]
    if result.outcome is not Outcome.APPLIED or result.pass_name != "exact":
        return
    after = batch.texts["f"]
    assert any(
        after.startswith(text[:i]) and after.endswith(text[i + len(old) :])
        for i in _places(text, old)
        if not splits_token(text, i, i + len(old))
    )


@SETTINGS
@given(texts, st.text(alphabet="ab\n", min_size=1, max_size=12), texts)
def test_an_old_text_found_twice_changes_nothing_and_names_every_place(before, old, after) -> None:
    text = before + old + after + old
    places = _places(text, old)
    if text.count(old) < 2 or any(_not_exact(text, i, old) for i in places):
        return
    if old.startswith("\n"):
        return  # a quoted blank first line is looked for where a blank line stands first
    batch = apply_edits([EditOp("f", "replace", old, old + "z")], {"f": text})
    assert (batch.texts, batch.results[0].outcome) == ({}, Outcome.FAILED)
    assert len(batch.results[0].matches) == text.count(old)


@SETTINGS
@given(st.text(max_size=300))
def test_the_block_parser_never_raises_and_every_block_is_an_op_or_a_reason(text) -> None:
    for final in (True, False):
        for block in parse_edit_blocks(text, final=final):
            assert (block.op is None) != (block.error == "")


@SETTINGS
@given(texts, texts, texts, st.booleans())
def test_applying_never_raises_and_a_refused_edit_changes_nothing(text, old, new, every) -> None:
    op = EditOp("f", "replace", old, new, replace_all=every)
    batch = apply_edits([op], {"f": text})
    if batch.results[0].outcome is not Outcome.APPLIED:
        assert batch.texts == {}
