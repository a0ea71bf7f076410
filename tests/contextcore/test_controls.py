"""Text made safe to print: every control sequence out but colours, on a stream too."""

from __future__ import annotations

import re

from contextcore.controls import printable

SAMPLE = (
    "a\x1b]52;c;eA==\x07b\x1b]0;t\x1b\\c\x1b]8;;http://x\x07d\x1b]8;;\x07"
    "\x1b[31mred\x1b[0m\x1b[1A\x1b[2K\x9b2J\x1b7\x08e\tf\r\ng\rh\x1b]unended"
)
LEFT = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def leftover(text: str) -> list[str]:
    return LEFT.findall(re.sub(r"\x1b\[[0-9;:]*m", "", text).replace("\r\n", "\n"))


def test_only_colours_newlines_and_tabs_are_left_and_nothing_writes_over_a_line():
    assert printable(SAMPLE) == "abcd\x1b[31mred\x1b[0me\tf\r\ng\nhunended"
    assert printable(SAMPLE, colours=False) == "abcdrede\tf\r\ng\nhunended"


def test_a_stream_cleaned_piece_by_piece_holds_no_control_either():
    for cut in range(len(SAMPLE) + 1):
        pieces = printable(SAMPLE[:cut]) + printable(SAMPLE[cut:])
        assert leftover(pieces) == [], cut
