"""The shapes of the real-history corpus: one hunk of a commit as a model sends it.

Each maker takes a file (the lines before a commit) and its hunks and returns a `Draft`: the
model's old and new text, the file on disk (a splice of the file), whether the model's
version of the file is known, and the expectation, built by splicing lines: the hunk
applied where the quote tells one place, a refusal (recording the file the model meant)
where it does not, the file left as it is for a conflict, the same file for an edit already
made. The drift is what models do to text they quote; the token shapes are the issue's
(a number the person lengthened, a name that starts a longer one). Non-goals: reading git
(`bench.edits.history`), judging (`bench.edits.edits_bench`).
"""

from __future__ import annotations

import difflib
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from bench.edits.builder import apply_splice, curly, sha
from bench.edits.expect import (
    Key,
    elision_is_determined,
    indent_of,
    is_word,
    runs,
    whole_words,
)
from contextcore.edits.textshape import PUNCTUATION


@dataclass(frozen=True)
class Hunk:
    start: int  # the first replaced line of the file (0-based)
    end: int  # after the last
    new: tuple[str, ...]  # what the commit put there


@dataclass
class Draft:
    old: list[str]
    new: list[str]
    expected: str  # applied | refused | already
    meant: list[str] | None = None  # the file the model meant (lines)
    splice: list[Any] | None = None  # the disk: the file with this splice
    seen: bool = False  # the model's version is stored (a three-way merge is possible)
    base: bool = False  # its hash is known (the file may have changed since)
    final_newline: bool = True
    extra: dict[str, Any] = field(default_factory=dict)


Maker = Callable[[list[str], list["Hunk"], random.Random], "Draft | None"]
NUMBER_AT_END = re.compile(r"^(?P<head>.*\S\s*[=:(,]\s*)(?P<number>\d{2,})(?P<tail>,?\)?)$")
BARE = (("...", "..."),)
COMMENTS = (
    ("# ...", "# ..."),
    ("# ...", "# ... existing code ..."),
    ("# ... existing code ...", "# ... existing code ..."),
)


def applied(lines: list[str], hunk: Hunk) -> list[str]:
    return lines[: hunk.start] + list(hunk.new) + lines[hunk.end :]


def window(lines: list[str], hunk: Hunk, rng: random.Random) -> tuple[int, int] | None:
    """The lines a model quotes for a hunk: the changed ones and 0-2 lines each side."""
    before, after = rng.randint(0, 2), rng.randint(0, 2)
    if hunk.start == hunk.end and before + after == 0:
        before = 1
    start, end = max(0, hunk.start - before), min(len(lines), hunk.end + after)
    if not any(line.strip() for line in lines[start:end]):
        return None
    return start, end


def quote(lines: list[str], hunk: Hunk, span: tuple[int, int]) -> tuple[list[str], list[str]]:
    start, end = span
    return lines[start:end], lines[start : hunk.start] + list(hunk.new) + lines[hunk.end : end]


def _drifted(drift: Callable[[list[str], list[str], random.Random], Any], key: Key) -> Maker:
    def make(lines: list[str], hunks: list[Hunk], rng: random.Random) -> Draft | None:
        hunk = rng.choice(hunks)
        span = window(lines, hunk, rng)
        if span is None:
            return None
        old, new = quote(lines, hunk, span)
        drifted = drift(old, new, rng)
        if drifted is None:
            return None
        model_old, model_new = drifted
        keyed = [key(m) for m in model_old]
        unique = runs([key(line) for line in lines], keyed) == 1
        meant = applied(lines, hunk)
        draft = Draft(model_old, model_new, "applied" if unique else "refused", meant)
        draft.final_newline = rng.random() >= 0.3  # tool arguments often end without one
        return draft

    return make


def _as_is(old, new, rng):
    return old, new


def _trailing(old, new, rng):
    """Trailing spaces on some quoted lines, copied on the context lines of the new text
    (its first and last lines as long as they are the old text's own)."""
    padded = {k for k, line in enumerate(old) if line.strip() and rng.random() < 0.6} or {0}
    model_old = [line + "  " if k in padded else line for k, line in enumerate(old)]
    shorter = min(len(old), len(new))
    lead = next((k for k in range(shorter) if old[k] != new[k]), shorter)
    tail = next((k for k in range(shorter) if old[-1 - k] != new[-1 - k]), shorter)
    tail = min(tail, len(old) - lead, len(new) - lead)
    model_new = list(new)
    for k in range(lead):
        model_new[k] = model_old[k]
    for k in range(1, tail + 1):
        model_new[-k] = model_old[-k]
    return model_old, model_new


def _indentation(old, new, rng):
    least = min(indent_of(line) for line in old + new if line.strip())
    if least < 4 and rng.random() < 0.7:
        return None
    if least >= 4 and rng.random() < 0.7:  # quoted from its own first column
        return [s[least:] for s in old], [s[least:] for s in new]
    return ["    " + s if s.strip() else s for s in old], [
        "    " + s if s.strip() else s for s in new
    ]


def _tabs(old, new, rng):
    if not any(indent_of(line) >= 4 for line in old if line.strip()):
        return None

    def tab(line: str) -> str:
        n = indent_of(line)
        return "\t" * (n // 4) + " " * (n % 4) + line.lstrip(" ")

    return [tab(s) for s in old], [tab(s) for s in new]


def _punctuation(old, new, rng):
    if not any('"' in s or "'" in s for s in old) or not all(s.isascii() for s in old + new):
        return None
    return [curly(s) for s in old], [curly(s) for s in new]


def _stripped(line: str) -> str:
    return line.strip()


def _ascii(line: str) -> str:
    return line.translate(PUNCTUATION).strip()


def _elided(markers: tuple[tuple[str, str], ...], mismatch: bool = False) -> Maker:
    """The enclosing block's first line, a `...` line for the lines before the change, and
    the change; with `mismatch`, a new text that does not leave those lines out."""

    def make(lines: list[str], hunks: list[Hunk], rng: random.Random) -> Draft | None:
        hunk = rng.choice(hunks)
        span = window(lines, hunk, rng)
        if span is None:
            return None
        start, _ = span
        first = next((line for line in lines[start:] if line.strip()), "")
        head = _header(lines, start, indent_of(first))
        if head is None:
            return None
        gap = [line for line in lines[head + 1 : start] if line.strip()]
        depth = " " * indent_of(gap[0])
        old_marker, new_marker = rng.choice(markers)
        old, new = quote(lines, hunk, span)
        model_old = [lines[head], depth + old_marker, *old]
        if mismatch:
            return Draft(model_old, [lines[head], *new], "refused")
        model_new = [lines[head], depth + new_marker, *new]
        meant = applied(lines, hunk)
        if elision_is_determined(lines, head, [lines[head]], old):
            return Draft(model_old, model_new, "applied", meant)
        return Draft(model_old, model_new, "refused", meant)

    return make


def _header(lines: list[str], start: int, depth: int) -> int | None:
    """The line that opens the block holding line `start`, two or more lines above it."""
    for k in range(start - 1, -1, -1):
        line = lines[k]
        if line.strip() and indent_of(line) < depth:
            body = [s for s in lines[k + 1 : start] if s.strip()]
            if line.rstrip().endswith(":") and len(body) >= 2:
                return k
            return None
    return None


def _stale(kind: str) -> Maker:
    """Another hunk of the commit on disk (`other`, `other unknown`), the person's edit of
    the hunk's own lines (`overlap`), or the hunk itself made already (`already`)."""

    def make(lines: list[str], hunks: list[Hunk], rng: random.Random) -> Draft | None:
        hunk = rng.choice(hunks)
        span = window(lines, hunk, rng)
        if span is None:
            return None
        old, new = quote(lines, hunk, span)
        if runs(lines, old) != 1:
            return None  # the model's own version does not tell one place: not this shape
        if kind == "already":
            rows = [line + "\n" for line in hunk.new]
            return Draft(
                old, new, "already", splice=[hunk.start, hunk.end, rows], seen=True, base=True
            )
        if kind == "overlap":
            changed = [k for k in range(hunk.start, hunk.end) if lines[k].strip()]
            if not changed:
                return None
            k = rng.choice(changed)
            splice = [k, k + 1, [lines[k] + "  # edited here\n"]]
            return Draft(old, new, "refused", splice=splice, seen=True, base=True)
        other = rng.choice([h for h in hunks if h != hunk])
        splice = [other.start, other.end, [line + "\n" for line in other.new]]
        first, second = sorted([hunk, other], key=lambda h: h.start, reverse=True)
        meant = applied(applied(lines, first), second)
        disk = apply_splice("".join(s + "\n" for s in lines), splice).split("\n")[:-1]
        known = kind == "other"
        expected = "applied" if known or runs(disk, old) == 1 else "refused"
        return Draft(old, new, expected, meant, splice, seen=known, base=True)

    return make


def _number_grew(seen: bool) -> Maker:
    """The person added a digit to a number on the line the model edits (200 -> 2000)."""

    def make(lines: list[str], hunks: list[Hunk], rng: random.Random) -> Draft | None:
        places = [k for k, line in enumerate(lines) if NUMBER_AT_END.match(line)]
        places = [k for k in places if lines.count(lines[k]) == 1]
        if not places:
            return None
        k = rng.choice(places)
        match = NUMBER_AT_END.match(lines[k])
        grown = match["head"] + match["number"] + "0" + match["tail"]
        old, new = [lines[k]], [lines[k] + "  # checked"]
        draft = Draft(old, new, "refused", splice=[k, k + 1, [grown + "\n"]], seen=seen, base=True)
        draft.final_newline = False
        return draft

    return make


def _misquoted_number(lines: list[str], hunks: list[Hunk], rng: random.Random) -> Draft | None:
    """The model quotes a number one digit short (the file says 1000, the model 100)."""
    text = "\n".join(lines)
    places = [k for k, line in enumerate(lines) if NUMBER_AT_END.match(line)]
    places = [k for k in places if not NUMBER_AT_END.match(lines[k])["tail"]]
    places = [k for k in places if whole_words(text, lines[k][:-1].strip()) == 0]
    if not places:
        return None
    short = lines[rng.choice(places)][:-1]
    draft = Draft([short], [short + "  # checked"], "refused")
    draft.final_newline = False
    return draft


def _longer_name(lines: list[str], hunks: list[Hunk], rng: random.Random) -> Draft | None:
    """A line that is the start of a longer line elsewhere (`import json` beside `import
    jsonify`), quoted without its indentation as edit_file calls often do."""
    pairs = _prefix_pairs(tuple(lines))
    if not pairs:
        return None
    k, longer_first = rng.choice(pairs)
    short = lines[k].strip()
    meant = lines[:k] + [lines[k] + "  # checked"] + lines[k + 1 :]
    draft = Draft([short], [short + "  # checked"], "applied", meant)
    draft.final_newline = False
    draft.extra["longer_line_first"] = longer_first
    return draft


@cache
def _prefix_pairs(lines: tuple[str, ...]) -> list[tuple[int, bool]]:
    """Lines whose text stands once as whole words and starts a longer line's text."""
    stripped = [line.strip() for line in lines]
    text = "\n".join(lines)
    pairs = []
    for k, short in enumerate(stripped):
        if len(short) < 8 or not (is_word(short[0]) and is_word(short[-1])):
            continue
        longer = [
            j
            for j, s in enumerate(stripped)
            if len(s) > len(short) and s.startswith(short) and is_word(s[len(short)])
        ]
        if longer and whole_words(text, short) == 1:
            pairs.append((k, min(longer) < k))
    return pairs


SHAPES: dict[str, tuple[int, Maker]] = {
    "real: exact": (50, _drifted(_as_is, lambda s: s)),
    "real: trailing whitespace": (20, _drifted(_trailing, str.rstrip)),
    "real: indentation": (30, _drifted(_indentation, _stripped)),
    "real: tabs": (15, _drifted(_tabs, lambda s: s.expandtabs(4).strip())),
    "real: punctuation": (15, _drifted(_punctuation, _ascii)),
    "real: elided with a bare ...": (20, _elided(BARE)),
    "real: elided with # ... comments": (20, _elided(COMMENTS)),
    "real: elided, new text not": (10, _elided(BARE + COMMENTS, mismatch=True)),
    "real: stale, other hunk on disk": (25, _stale("other")),
    "real: stale, seen text unknown": (15, _stale("other unknown")),
    "real: stale, same lines edited": (20, _stale("overlap")),
    "real: stale, already made": (15, _stale("already")),
    "token split: number grew": (10, _number_grew(seen=True)),
    "token split: number grew, seen unknown": (5, _number_grew(seen=False)),
    "token split: longer name": (15, _longer_name),
    "token split: misquoted number": (15, _misquoted_number),
}


def build_case(shape, number, key, origin, lines: list[str], draft: Draft) -> dict[str, Any]:
    """The corpus row of a draft; the file the draft's splice makes is the disk."""
    text = "".join(line + "\n" for line in lines)
    disk = apply_splice(text, draft.splice)
    # Without a final newline a last blank line would not be told from none: keep it then.
    blank_last = not draft.old[-1].strip() or (draft.new and not draft.new[-1].strip())
    end = "\n" if draft.final_newline or blank_last else ""
    old = "\n".join(draft.old) + end
    new = "\n".join(draft.new) + end if draft.new else ""
    target = disk
    if draft.expected == "applied":
        target = "".join(line + "\n" for line in draft.meant or [])
    case: dict[str, Any] = {
        "id": f"{shape.replace(' ', '-').replace(':', '').replace(',', '')}-{number:03}",
        "shape": shape,
        "file": key,
        "variant": "plain",
        "splice": draft.splice,
        "seen_variant": "plain" if draft.seen else None,
        "op": {"path": key, "old_text": old, "new_text": new},
        "expected": draft.expected,
        "expected_sha256": sha(target),
        "expected_diff": "".join(
            difflib.unified_diff(disk.splitlines(True), target.splitlines(True), key, key, n=1)
        ),
        "origin": origin,
        **draft.extra,
    }
    if draft.expected == "refused" and draft.meant is not None:
        case["intended_sha256"] = sha("".join(line + "\n" for line in draft.meant))
    if draft.base:
        case["base_sha256"] = sha(text)
    return case
