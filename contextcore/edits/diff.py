"""Unified diffs of an edit, in hunks the person can accept or reject one by one.

`diff_hunks` cuts the change from one text to another into hunks (difflib's grouping, three
lines of context); `unified_diff` renders them with `---`/`+++` headers (`/dev/null` for a
created or deleted file); `apply_hunks` builds the text with only the chosen hunks applied.
Lines are compared without their endings, so a CRLF file diffs like an LF one. Non-goals:
colour and HTML (the page's), word-level diffs.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from difflib import SequenceMatcher

CONTEXT_LINES = 3


@dataclass(frozen=True)
class Hunk:
    old_start: int  # 1-based, as in the @@ header
    old_count: int
    new_start: int
    new_count: int
    lines: tuple[str, ...]  # " x", "-x", "+x"

    @property
    def added(self) -> int:
        return sum(1 for line in self.lines if line.startswith("+"))

    @property
    def removed(self) -> int:
        return sum(1 for line in self.lines if line.startswith("-"))

    def header(self) -> str:
        return (
            f"@@ -{_range(self.old_start, self.old_count)} "
            f"+{_range(self.new_start, self.new_count)} @@"
        )


def _range(start: int, count: int) -> str:
    # The unified format names the line before an empty range, and leaves out a count of 1.
    start = start - 1 if count == 0 else start
    return str(start) if count == 1 else f"{start},{count}"


def _lines(text: str | None) -> list[str]:
    return [] if not text else [line.rstrip("\r\n") for line in text.splitlines(True)]


def _opcode_groups(before: list[str], after: list[str], context: int):
    matcher = SequenceMatcher(None, before, after, autojunk=False)
    return list(matcher.get_grouped_opcodes(context)) if before != after else []


def diff_hunks(before: str | None, after: str | None, context: int = CONTEXT_LINES) -> list[Hunk]:
    """The hunks that turn `before` into `after` (None: the file does not exist)."""
    old, new = _lines(before), _lines(after)
    hunks = []
    for group in _opcode_groups(old, new, context):
        lines: list[str] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [" " + line for line in old[i1:i2]]
                continue
            lines += ["-" + line for line in old[i1:i2]]
            lines += ["+" + line for line in new[j1:j2]]
        first, last = group[0], group[-1]
        hunks.append(
            Hunk(first[1] + 1, last[2] - first[1], first[3] + 1, last[4] - first[3], tuple(lines))
        )
    return hunks


def unified_diff(
    path: str, before: str | None, after: str | None, context: int = CONTEXT_LINES
) -> str:
    """The change as unified diff text; "" when there is none."""
    hunks = diff_hunks(before, after, context)
    if not hunks:
        return ""
    head = [
        "--- " + ("/dev/null" if before is None else f"a/{path}"),
        "+++ " + ("/dev/null" if after is None else f"b/{path}"),
    ]
    for hunk in hunks:
        head += [hunk.header(), *hunk.lines]
    return "\n".join(head) + "\n"


def apply_hunks(before: str, after: str, accepted: Collection[int]) -> str:
    """`before` with only the hunks numbered in `accepted` (0-based, in the order
    `diff_hunks` gives them with the same context) taken from `after`."""
    old, new = before.splitlines(True), after.splitlines(True)
    plain_old, plain_new = _lines(before), _lines(after)
    out: list[str] = []
    done = 0  # old lines already written
    for number, group in enumerate(_opcode_groups(plain_old, plain_new, CONTEXT_LINES)):
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                continue
            out += old[done:i1]
            out += new[j1:j2] if number in accepted else old[i1:i2]
            done = i2
    out += old[done:]
    return "".join(out)
