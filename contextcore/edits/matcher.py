"""Where old text is in a file: exact first, then tolerant passes, never a guess.

`find` tries the passes in order and returns every place the first successful pass
matched; the caller demands one place (or takes all with `replace_all`). Exact is a
substring search. The tolerant passes compare whole lines under a growing normalisation:
trailing whitespace, CR before LF, one uniform indentation offset (as text), indentation
in columns with tabs expanded (shifted only with the offset pass), Unicode punctuation.
A looser pass runs only when the stricter ones found nothing, and no pass measures
similarity: text matches after normalisation or it does not. No match splits a token
(`contextcore.edits.exact`): where the exact text stands only inside a longer word or
number, no looser pass looks elsewhere; whole lines quoted without their indentation are
the indentation pass's, not a substring. The replacement keeps the file's own bytes on
every line the model did not change, re-indents changed lines by the offset found and
joins lines with the file's line ending. After the punctuation pass a changed or added
line keeps only the typographic characters the file itself holds there (its paired line,
else the matched region) at least as often as the model's quote did: the rest (the
model's curly quotes where the file has ASCII ones) are written as ASCII, so a
non-breaking space in a comment never lets a curly quote into code.
Non-goals: bytes (the caller decodes), choosing among matches.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection
from dataclasses import dataclass
from difflib import SequenceMatcher
from types import MappingProxyType

from contextcore.edits.exact import Splice, line_numbers, places, splices
from contextcore.edits.exact import splits_token as splits_token
from contextcore.edits.exact import token_splits as token_splits
from contextcore.edits.textshape import (
    FANCY,
    PUNCTUATION,
    ascii_punctuation,
    has_fancy,
    shape_of,
    text_lines,
)

PASSES = ("exact", "trailing_whitespace", "line_endings", "indentation", "tabs", "punctuation")
PASS_LABELS = MappingProxyType(
    {
        "exact": "exactly",
        "trailing_whitespace": "ignoring trailing whitespace",
        "line_endings": "ignoring line endings",
        "indentation": "ignoring a uniform indentation offset",
        "tabs": "ignoring tabs versus spaces",
        "punctuation": "ignoring curly quotes, dashes and non-breaking spaces",
    }
)
TAB_SIZES = (4, 8, 2)
Reindent = Callable[[str], str]


@dataclass(frozen=True)
class Found:
    pass_name: str
    lines: tuple[int, ...]  # 1-based first line of every match, in order
    splices: tuple[Splice, ...]  # what each match becomes, same order
    spans: tuple[tuple[int, int], ...] = ()  # where the old text stands, same order


def find(body: str, old: str, new: str, passes: Collection[str] = PASSES) -> Found | None:
    """Every place `old` matches in `body` (a file's text without its BOM) under the first
    pass that matches at all, with what `new` becomes there; None when no pass matches."""
    eol = shape_of(body).eol
    if "exact" in passes and old:
        where = places(body, old, new)
        if where.starts:
            spans = tuple((start, start + len(old)) for start in where.starts)
            made = tuple(splices(body, where.starts, old, new, eol))
            return Found("exact", line_numbers(body, where.starts), made, spans)
        if where.stop:
            # The text stands there, in a longer word or number: it changed (100 -> 1000),
            # and a looser pass finding it elsewhere would be a guess at another place.
            return None
    old_lines = text_lines(old)
    if not any(line.strip() for line in old_lines):
        return None
    rows = _Rows(body)
    new_lines = text_lines(new) if new else []
    enabled: set[str] = set()
    for name in PASSES[1:]:
        if name in passes:
            enabled.add(name)
            found = _by_lines(name, frozenset(enabled), rows, old_lines, new_lines, eol)
            if found:
                return found
    return None


class _Rows:
    """The file split on LF, each row keeping its CR, with each row's offset."""

    def __init__(self, body: str) -> None:
        self.body = body
        self.raw = body.split("\n")
        self.starts = [0, *itertools.accumulate(len(r) + 1 for r in self.raw[:-1])]
        self._probes: dict[bool, list[str]] = {}

    def candidates(self, first: str, punctuation: bool) -> list[int]:
        """Rows that may start a match of a line: every pass's key only drops whitespace
        at the ends (and maps punctuation), so a row whose stripped text differs cannot.
        The stripped rows are made once per file, not once per pass."""
        if punctuation not in self._probes:
            # One translation of the whole text (its line count stays), not one per row.
            rows = ascii_punctuation(self.body).split("\n") if punctuation else self.raw
            self._probes[punctuation] = [r.strip() for r in rows]
        first = (first.translate(PUNCTUATION) if punctuation else first).strip()
        return [i for i, row in enumerate(self._probes[punctuation]) if row == first]

    def span(self, first: int, count: int) -> tuple[int, int]:
        """Where the rows stand, without the last one's line ending."""
        last = first + count - 1
        return self.starts[first], self.starts[last] + len(self.raw[last].removesuffix("\r"))

    def splice(self, first: int, count: int, out: list[str], eol: str) -> Splice:
        last = first + count - 1
        start = self.starts[first]
        if out:
            end = self.starts[last] + len(self.raw[last].removesuffix("\r"))
            return Splice(start, end, eol.join(out))
        if last + 1 < len(self.raw):  # the lines go with their line breaks
            return Splice(start, self.starts[last + 1], "")
        if first == 0:
            return Splice(0, len(self.body), "")
        # The last lines go: the break before them goes too, so no final newline appears.
        cr = 1 if self.raw[first - 1].endswith("\r") else 0
        return Splice(start - 1 - cr, len(self.body), "")


def _key(line: str, enabled: frozenset[str]) -> str:
    if "line_endings" in enabled:
        line = line.removesuffix("\r")
    if "trailing_whitespace" in enabled:
        line = line.rstrip(" \t\f\v")
    if "punctuation" in enabled:
        line = line.translate(PUNCTUATION)
    if "indentation" in enabled or "tabs" in enabled:
        line = line.lstrip(" \t")
    return line


def _by_lines(
    name: str,
    enabled: frozenset[str],
    rows: _Rows,
    old_lines: list[str],
    new_lines: list[str],
    eol: str,
) -> Found | None:
    old_keys = [_key(o, enabled) for o in old_lines]
    count = len(old_keys)
    placed: list[tuple[int, Reindent | None]] = []
    after = 0  # matches never overlap
    for i in rows.candidates(old_lines[0], "punctuation" in enabled):
        if i < after or i + count > len(rows.raw):
            continue
        if [_key(r, enabled) for r in rows.raw[i : i + count]] != old_keys:
            continue
        matched = [r.removesuffix("\r") for r in rows.raw[i : i + count]]
        reindent = _reindent(matched, old_lines, enabled)
        if reindent is not False:
            placed.append((i, reindent))
            after = i + count
    if not placed:
        return None
    splices = []
    for i, reindent in placed:
        matched = [r.removesuffix("\r") for r in rows.raw[i : i + count]]
        punctuation = "punctuation" in enabled
        out = _replacement(matched, old_lines, new_lines, reindent, punctuation)
        splices.append(rows.splice(i, count, out, eol))
    spans = tuple(rows.span(i, count) for i, _ in placed)
    return Found(name, tuple(i + 1 for i, _ in placed), tuple(splices), spans)


def _replacement(
    matched: list[str],
    old_lines: list[str],
    new_lines: list[str],
    reindent: Reindent | None,
    punctuation: bool,
) -> list[str]:
    """The new lines: the file's own line wherever the model left a line unchanged, the
    model's line (re-indented, punctuation as the file has it) wherever it changed one."""
    out: list[str] = []
    opcodes = SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes()
    region = _file_punctuation(matched, old_lines)
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            out.extend(matched[i1:i2])
            continue
        paired = tag == "replace" and i2 - i1 == j2 - j1
        for k, line in enumerate(new_lines[j1:j2]):
            line = reindent(line) if reindent else line
            if punctuation and has_fancy(line):
                keep = (
                    _file_punctuation([matched[i1 + k]], [old_lines[i1 + k]]) if paired else region
                )
                line = _as_file(line, keep)
            out.append(line)
    return out


def _file_punctuation(matched: list[str], old_lines: list[str]) -> frozenset[str]:
    """The typographic characters a changed line may keep: those the file's lines hold
    themselves, and at least as often as the model's quote of them (a character the model
    wrote where the file has ASCII is the model's drift, which code must not get)."""
    file_text, old_text = "".join(matched), "".join(old_lines)
    return frozenset(c for c in set(file_text) & FANCY if file_text.count(c) >= old_text.count(c))


def _as_file(line: str, keep: frozenset[str]) -> str:
    """`line` with every typographic character not in `keep` written as ASCII."""
    return "".join(c if c in keep else PUNCTUATION.get(ord(c), c) for c in line)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _reindent(matched: list[str], old_lines: list[str], enabled: frozenset[str]):
    """None when indentation is compared as is; otherwise how to re-indent a changed line,
    or False when the match's indentation offset is not one uniform offset."""
    if "indentation" not in enabled and "tabs" not in enabled:
        return None
    punct = "punctuation" in enabled
    pairs = [
        (_indent(f.translate(PUNCTUATION) if punct else f), _indent(o))
        for f, o in zip(matched, old_lines, strict=True)
        if o.strip()
    ]
    if "tabs" in enabled:
        for tab in TAB_SIZES:
            found = _column_offset(pairs, tab, shifts="indentation" in enabled)
            if found:
                return found
        return False
    return _text_offset(pairs) or False


def _text_offset(pairs: list[tuple[str, str]]) -> Reindent | None:
    file_indent, old_indent = pairs[0]
    if file_indent.endswith(old_indent):
        extra = file_indent[: len(file_indent) - len(old_indent)]
        if all(f == extra + o for f, o in pairs):
            return lambda line: extra + line if line.strip() else ""
    if old_indent.endswith(file_indent):
        surplus = old_indent[: len(old_indent) - len(file_indent)]
        if all(o == surplus + f for f, o in pairs):
            return lambda line: _dedent(line, surplus) if line.strip() else ""
    return None


def _dedent(line: str, surplus: str) -> str:
    if line.startswith(surplus):
        return line[len(surplus) :]
    return line[min(len(surplus), len(_indent(line))) :]


def _column_offset(pairs: list[tuple[str, str]], tab: int, shifts: bool) -> Reindent | None:
    """Indentation compared in columns: the same, or (`shifts`) off by one uniform shift."""
    shift = len(pairs[0][0].expandtabs(tab)) - len(pairs[0][1].expandtabs(tab))
    if shift and not shifts:
        return None
    if any(len(f.expandtabs(tab)) - len(o.expandtabs(tab)) != shift for f, o in pairs):
        return None
    tabs = any("\t" in f for f, _ in pairs)

    def reindent(line: str) -> str:
        if not line.strip():
            return ""
        indent = _indent(line)
        columns = max(0, len(indent.expandtabs(tab)) + shift)
        lead = "\t" * (columns // tab) + " " * (columns % tab) if tabs else " " * columns
        return lead + line[len(indent) :]

    return reindent
