"""The artifact trail's text: one line an artifact, within its bound."""

from __future__ import annotations

from contextcore.conversation.artifacts import (
    FAILED,
    HEADER,
    LINE_CHARS,
    PASSED,
    Artifact,
    lines_of,
    render,
)


def test_over_its_bound_the_trail_leaves_out_the_oldest_passing_commands_first():
    artifacts = [
        Artifact("ran `pytest` (tests), turn 1: exit 0", PASSED),
        Artifact("edited a.py (+1 -0), turn 1: applied"),
        Artifact("ran `pytest` (tests), turn 2: exit 1; failed: test_a", FAILED),
        Artifact("ran `pytest` (tests), turn 3: exit 0", PASSED),
    ]

    text = render(artifacts, limit=3)

    assert text.startswith(HEADER)
    assert lines_of(text) == [
        "(1 older artifact left out)",
        "edited a.py (+1 -0), turn 1: applied",
        "ran `pytest` (tests), turn 2: exit 1; failed: test_a",
        "ran `pytest` (tests), turn 3: exit 0",
    ]


def test_a_line_is_one_printable_line_of_bounded_length():
    [line] = lines_of(render([Artifact("pinned user message: \x1b[31mred\x1b[0m\n" + "x" * 500)]))

    assert len(line) == LINE_CHARS and "\n" not in line and "\x1b" not in line
    assert line.startswith("pinned user message: red x")
    assert render([]) == ""
