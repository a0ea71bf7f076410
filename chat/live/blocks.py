"""Where a streaming answer splits into top-level markdown blocks that are final.

A block is final when nothing the model may still write can change how it renders: the
parser (markdown-it's block rules, the ones `render.py` uses) has started another
top-level block after it, or it closes on its own: a fence whose closing line has come, a
heading, a rule, or a paragraph, table or quote followed by a blank line. Lists and
indented code go on across blank lines, so they wait for the next block. Only complete
lines decide: a partial last line may still become anything ("1" becomes "1. item").
Rendering the final blocks one by one gives the HTML of rendering them together, except
where a reference definition in one block names a link in another. Non-goal: rendering.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it.token import Token

from history.markup.render import markdown_parser

_NEWLINE = re.compile(r"\r\n?|\n")  # what markdown-it counts as a line break
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})")
_BLANK = re.compile(r"[ \t]*")
_CLOSED_BY_BLANK_LINE = frozenset({"paragraph_open", "table_open", "blockquote_open"})
_CLOSED_ALONE = frozenset({"heading_open", "hr"})


@dataclass(frozen=True)
class Split:
    """`text[start:]` cut into the sources of its final blocks and the open rest.

    `final` holds the sources in order; together they are `text[start:open_at]`."""

    final: tuple[str, ...]
    open_at: int


def split_final(text: str, start: int = 0) -> Split:
    """The final blocks of `text[start:]`; `start` must be where a block begins."""
    region = text[start : text.rfind("\n") + 1]
    if not region:
        return Split((), start)
    normalized = _NEWLINE.sub("\n", region).replace("\0", "\ufffd")
    lines = normalized.split("\n")[:-1]
    tokens = _top_level(normalized)
    ends = [t.map[0] for t in tokens[1:]]
    if tokens and _closes_alone(tokens[-1], lines):
        ends.append(len(lines))
    offsets = [0, *(m.end() for m in _NEWLINE.finditer(region))]
    cuts = [0, *(offsets[n] for n in ends)]
    final = tuple(region[a:b] for a, b in zip(cuts, cuts[1:], strict=False))
    return Split(final, start + cuts[-1])


def fence_opening(block: str) -> bool:
    """Whether `block`, the start of a top-level block, opens a code fence."""
    return _FENCE_OPEN.match(block) is not None


def _top_level(source: str) -> list[Token]:
    md = markdown_parser()
    tokens: list[Token] = []
    md.block.parse(source, md, {}, tokens)
    return [t for t in tokens if t.level == 0 and t.nesting >= 0 and t.map]


def _closes_alone(token: Token, lines: list[str]) -> bool:
    """Whether the last top-level block is final without a block after it."""
    first, end = token.map
    if token.type == "heading_open" and "|" in lines[first]:
        return False  # a table's header row if the next line is a delimiter row ("# a | b")
    if token.type in _CLOSED_ALONE:
        return True
    if token.type == "fence":
        return end - first >= 2 and _closes_fence(lines[end - 1], token.markup)
    if token.type in _CLOSED_BY_BLANK_LINE:
        return end < len(lines) and _BLANK.fullmatch(lines[end]) is not None
    return False


def _closes_fence(line: str, markup: str) -> bool:
    closing = _FENCE_OPEN.match(line)
    if closing is None or line[closing.end() :].strip(" \t"):
        return False
    fence = closing.group(1)
    return fence[0] == markup[0] and len(fence) >= len(markup)
