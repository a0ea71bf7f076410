"""Hypothesis properties of the matcher: an exact unique edit lands exactly there."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from contextcore.edits import EditOp, Outcome, apply_edits, parse_edit_blocks

SETTINGS = settings(max_examples=100, deadline=None)
texts = st.text(alphabet="ab \t\n\r“-", max_size=120)


@SETTINGS
@given(texts, texts, st.text(alphabet="xy\nz", min_size=1, max_size=20), texts)
def test_an_exact_unique_old_text_is_replaced_exactly_there(before, after, old, new) -> None:
    old, new = old.rstrip("\n") or "x", new.replace("\n", "").replace("\r", "")
    text = before + old + after
    if text.count(old) != 1 or old == new:
        return
    batch = apply_edits([EditOp("f", "replace", old, new)], {"f": text})
    assert (batch.results[0].outcome, batch.results[0].pass_name) == (Outcome.APPLIED, "exact")
    assert batch.texts["f"] == before + new + after


@SETTINGS
@given(texts, st.text(alphabet="ab\n", min_size=1, max_size=12), texts)
def test_an_old_text_found_twice_changes_nothing_and_names_every_place(before, old, after) -> None:
    text = before + old + after + old
    if text.count(old) < 2:
        return
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
