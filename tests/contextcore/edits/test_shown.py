"""The matcher works on the text the model was shown: a redacted value is no oracle, and
an edit elsewhere leaves its bytes as they are."""

from __future__ import annotations

import re
import string

from contextcore.edits import REDACTED_REFUSAL, EditOp, Outcome, apply_edits, text_sha256

MARKER = "[redacted: a GitHub token]"
TOKEN = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"
CONFIG = f"name: ci\nenv:\n  GITHUB_TOKEN: {TOKEN}\n  DEBUG: 0\nsteps:\n  - run: make\n"


def hide(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), MARKER) for m in re.finditer(r"ghp_[A-Za-z0-9]{36}", text)]


def edit(old: str, new: str, text: str = CONFIG, **fields):
    op = EditOp("ci.yml", "replace", old, new)
    batch = apply_edits([op], {"ci.yml": text}, hide=hide, **fields)
    return batch.results[0], batch.texts.get("ci.yml")


def test_every_guess_at_the_next_character_gets_the_same_answer() -> None:
    answers = set()
    for guess in string.ascii_letters + string.digits:
        result, after = edit("  GITHUB_TOKEN: ghp_" + guess, "  GITHUB_TOKEN: ghp_x")
        assert after is None
        answers.add((result.outcome, result.reason, result.closest, result.matches))
    assert len(answers) == 1
    [(outcome, reason, closest, _)] = answers
    assert outcome is Outcome.FAILED and "ghp_a" not in closest and MARKER in closest


def test_the_whole_value_guessed_right_is_answered_as_a_wrong_one() -> None:
    right, _ = edit(f"  GITHUB_TOKEN: {TOKEN}\n", "  GITHUB_TOKEN: x\n")
    wrong, _ = edit(f"  GITHUB_TOKEN: {TOKEN[:-1]}Q\n", "  GITHUB_TOKEN: x\n")
    assert (right.outcome, right.reason, right.closest) == (
        wrong.outcome,
        wrong.reason,
        wrong.closest,
    )


def test_an_edit_that_quotes_the_marker_is_refused_with_the_one_message() -> None:
    result, after = edit(f"  GITHUB_TOKEN: {MARKER}\n", "  GITHUB_TOKEN: ${{ secrets.T }}\n")
    assert (result.outcome, result.reason, result.closest, after) == (
        Outcome.FAILED,
        REDACTED_REFUSAL,
        "",
        None,
    )


def test_an_edit_that_writes_the_marker_or_covers_part_of_it_is_refused_the_same_way() -> None:
    written, _ = edit("  DEBUG: 0\n", f"  DEBUG: 0\n  COPY: {MARKER}\n")
    partial, _ = edit("GITHUB_TOKEN: [redacted: a", "GITHUB_TOKEN: [x")
    assert written.reason == partial.reason == REDACTED_REFUSAL


def test_an_edit_elsewhere_applies_and_keeps_the_value_byte_for_byte() -> None:
    result, after = edit("  DEBUG: 0\n", "  DEBUG: 1\n")
    assert (result.outcome, after) == (Outcome.APPLIED, CONFIG.replace("DEBUG: 0", "DEBUG: 1"))
    assert TOKEN in after


def test_an_edit_right_before_the_value_on_its_line_keeps_the_value() -> None:
    result, after = edit("  GITHUB_TOKEN: ", "  GH_TOKEN: ")
    assert after == CONFIG.replace("GITHUB_TOKEN", "GH_TOKEN")


def test_lines_left_out_with_dots_may_hold_the_value() -> None:
    result, after = edit("env:\n  ...\n  DEBUG: 0\n", "env:\n  ...\n  DEBUG: 2\n")
    assert (result.outcome, after) == (Outcome.APPLIED, CONFIG.replace("DEBUG: 0", "DEBUG: 2"))


def test_a_stale_file_merges_on_shown_text_and_keeps_the_new_value() -> None:
    rotated = "ghp_" + "Z" * 36
    current = "# rotated\n" + CONFIG.replace(TOKEN, rotated)
    op = EditOp(
        "ci.yml", "replace", "  DEBUG: 0\n", "  DEBUG: 1\n", base_sha256=text_sha256(CONFIG)
    )
    batch = apply_edits([op], {"ci.yml": current}, seen={"ci.yml": CONFIG}, hide=hide)
    assert batch.results[0].outcome is Outcome.APPLIED
    assert batch.texts["ci.yml"] == current.replace("DEBUG: 0", "DEBUG: 1")


def test_writing_a_file_that_holds_a_value_whole_is_refused() -> None:
    op = EditOp("ci.yml", "create", new_text="name: ci\n", overwrite=True)
    batch = apply_edits([op], {"ci.yml": CONFIG}, hide=hide)
    assert (batch.results[0].reason, batch.texts) == (REDACTED_REFUSAL, {})


def test_a_file_that_spells_out_a_marker_itself_keeps_it() -> None:
    text = f"doc = '{MARKER}'\ntoken = '{TOKEN}'\nx = 1\n"
    result, after = edit("x = 1\n", "x = 2\n", text)
    assert after == text.replace("x = 1", "x = 2")
