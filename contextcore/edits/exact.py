"""The exact pass: where old text stands as it is, as whole words, and what it becomes there.

A place is no match when it splits a token: its first or last character continues a word,
a number or a run of indentation of the file (`LIMIT = 100` in `LIMIT = 1000`, `    x` in
`        x`). Lines quoted without their indentation (the text starts after a line's
leading whitespace and goes on to another line, or becomes several lines) are left to the
indentation pass, which re-indents them; where such a place and an ordinary one both
exist, the text is ambiguous. The replacement keeps the file's line endings, adds no line
the model did not ask for, and deleting the whole text of lines deletes the lines.
Non-goals: the tolerant passes (`contextcore.edits.matcher`), choosing among places.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from contextcore.edits.textshape import with_eol


@dataclass(frozen=True)
class Splice:
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Places:
    starts: list[int]  # where the text stands as exact text, in order
    defer: bool  # none, but lines quoted without their indentation: the line passes' turn
    stop: bool  # none, and the text stands only inside longer words: look no further


def is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _joined(a: str, b: str) -> bool:
    """Two characters of one token: a word or number, or a run of indentation."""
    return (is_word(a) and is_word(b)) or (a in " \t" and b in " \t")


def splits_token(body: str, start: int, end: int) -> bool:
    """Whether `body[start:end]` begins or ends inside a word, a number or a run of spaces
    of `body` (`    return` inside `        return` is another line's deeper code)."""
    if 0 < start < len(body) and _joined(body[start - 1], body[start]):
        return True
    return 0 < end < len(body) and _joined(body[end - 1], body[end])


def splits_word(body: str, start: int, end: int) -> bool:
    inside = 0 < start < len(body) and is_word(body[start - 1]) and is_word(body[start])
    return inside or (0 < end < len(body) and is_word(body[end - 1]) and is_word(body[end]))


def token_splits(body: str, old: str, words_only: bool = True) -> tuple[int, ...]:
    """The lines where `old` stands exactly but only as part of a longer word or number
    (or, not `words_only`, also of a deeper indentation)."""
    split = splits_word if words_only else splits_token
    starts, at = [], body.find(old) if old else -1
    while at != -1:
        if split(body, at, at + len(old)):
            starts.append(at)
        at = body.find(old, at + 1)
    return line_numbers(body, starts)


def places(body: str, old: str, new: str) -> Places:
    """Where `old` stands exactly, as whole words, in `body`."""
    ordinary, unindented, split = [], [], False
    at = body.find(old)
    while at != -1:
        end = at + len(old)
        if splits_token(body, at, end):
            split = split or splits_word(body, at, end)
            at = body.find(old, at + 1)
            continue
        (unindented if _unindented(body, at, end, old, new) else ordinary).append(at)
        at = body.find(old, end)
    if unindented and not ordinary:
        return Places([], True, False)
    if old.startswith(("\n", "\r\n")):
        # A quoted blank first line is a blank line where one stands; elsewhere the break
        # only ends the line before, which the model did not quote.
        ordinary = [a for a in ordinary if a == 0 or body[a - 1] == "\n"] or ordinary
    return Places(sorted(ordinary + unindented), False, split and not ordinary)


def _unindented(body: str, start: int, end: int, old: str, new: str) -> bool:
    """Lines quoted without their indentation: as a substring the replacement would keep
    the first line's indentation and leave the others at the model's column."""
    if not old.split("\n", 1)[0].strip():
        return False
    line_start = body.rfind("\n", 0, start) + 1
    if line_start == start or body[line_start:start].strip(" \t"):
        return False
    return "\n" in old or ("\n" in new.rstrip("\r\n") and _at_line_end(body, end))


def _at_line_end(body: str, end: int) -> bool:
    return end == len(body) or body.startswith(("\n", "\r\n"), end)


def splices(body: str, starts: Sequence[int], old: str, new: str, eol: str) -> list[Splice]:
    """What each place becomes."""
    new = with_eol(new, eol) if "\n" in new else new
    if old.endswith("\n") and new and not new.endswith("\n"):
        new += eol  # whole lines replaced by text without its last line break
    out = []
    for start in starts:
        end, text = start + len(old), new
        if _at_line_end(body, end) and not old.endswith("\n"):
            # Old text up to a line's end and new text with a line break: the file's own break
            # follows, so the new one would add a line (or a final newline) nobody asked for.
            text = text.removesuffix("\n").removesuffix("\r")
            if not text:
                out.append(_whole_lines_deleted(body, start, end))
                continue
        out.append(Splice(start, end, text))
    return out


def _whole_lines_deleted(body: str, start: int, end: int) -> Splice:
    """The text of whole lines deleted: the lines go, not only their text (a blank or
    indentation-only line left behind is nobody's intent)."""
    line_start = body.rfind("\n", 0, start) + 1
    if body[line_start:start].strip(" \t"):
        return Splice(start, end, "")  # part of a line: its text only
    if end < len(body):
        return Splice(line_start, end + (2 if body.startswith("\r\n", end) else 1), "")
    if line_start == 0:
        return Splice(0, end, "")
    cr = 1 if line_start >= 2 and body[line_start - 2] == "\r" else 0
    return Splice(line_start - 1 - cr, end, "")


def line_numbers(body: str, offsets: Sequence[int]) -> tuple[int, ...]:
    numbers, line, previous = [], 1, 0
    for offset in offsets:
        line += body.count("\n", previous, offset)
        numbers.append(line)
        previous = offset
    return tuple(numbers)
