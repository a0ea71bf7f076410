"""Old text that leaves lines out with `...`: placed piece by piece, or refused.

Models quote a function's first lines, write `...` (or `# ... existing code ...`) for the
body they did not copy, and quote the lines they change. The old text is cut at those lines
into pieces; each piece must match whole lines of the file (the tolerant passes apply, the
token rule holds) and stand in order within one region: the lines left out between two
pieces go no shallower than the pieces, nor than one level inside a line that opens a
block (`def f():` then `def g():` is two regions). Pieces that each match once in the whole
file are one placement. Exactly one placement is applied: each piece becomes the new text's
piece at the same place, and the lines left out stay as they are. No placement, several,
or a new text that does not leave lines out at the same places is refused with a reason
naming the lines. A `...` line the file holds itself where the old text puts it (with its
neighbours, as whole lines: a docstring's or doctest's) is text, not a cut.
Non-goals: guessing among placements, `...` inside a line.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Collection
from dataclasses import dataclass

from contextcore.edits.matcher import Found, find
from contextcore.edits.textshape import elided_lines

MAX_PLACEMENTS = 10_000  # placements tried before calling the old text ambiguous
OPENERS = (":", "{", "(", "[")
TAB = 8


@dataclass(frozen=True)
class Elided:
    found: Found | None  # the one region, as splices of every piece ("elided")
    reason: str = ""  # why there is none
    matches: tuple[int, ...] = ()  # the first line of every region when there are several
    missing: str = ""  # a piece found nowhere, for the closest lines


@dataclass(frozen=True)
class _Piece:
    old: str
    new: str
    first: int  # its first line in the old text (1-based)
    last: int


def find_elided(body: str, old: str, new: str, passes: Collection[str]) -> Elided:
    """The one region where the pieces of `old` stand, or why there is none."""
    line_passes = tuple(p for p in passes if p != "exact")
    pieces, reason = _pieces(old, new, markers(body, old, passes))
    if reason:
        return Elided(None, reason)
    candidates = []
    for piece in pieces:
        found = find(body, piece.old, piece.new, line_passes) if line_passes else None
        if found is None:
            where = f"lines {piece.first}–{piece.last}" if piece.last > piece.first else ""
            where = where or f"line {piece.first}"
            return Elided(
                None,
                f"the old text leaves lines out with '...', and its {where} were not found "
                "as whole lines, neither exactly nor ignoring whitespace, indentation or "
                "quote style; nothing was changed. Quote those lines as the file has them.",
                missing=piece.old,
            )
        candidates.append(found)
    regions = _regions(body, candidates)
    if len(regions) == 1:
        return Elided(_joined(candidates, regions[0]))
    if not regions:
        starts = "; ".join(
            f"part {n} at line{'s' if len(f.lines) > 1 else ''} {_numbers(f.lines)}"
            for n, f in enumerate(candidates, 1)
        )
        return Elided(
            None,
            "the parts of the old text around its '...' lines are in the file, but not in "
            f"that order within one region ({starts}); nothing was changed. Quote the lines "
            "of one region, or make one edit per region.",
        )
    spans = [_lines_of(body, candidates, chain) for chain in regions[:3]]
    more = " and more" if len(regions) > 2 else ""
    return Elided(
        None,
        "the parts of the old text around its '...' lines can stand in more than one region "
        f"(lines {', '.join(f'{a}–{b}' for a, b in spans)}{more}); nothing was changed. "
        "Quote the lines left out that tell them apart, or make one edit per region.",
        matches=tuple(sorted({a for a, _ in spans})),
    )


def markers(body: str, old: str, passes: Collection[str]) -> list[int]:
    """The 1-based `...` lines of `old` that stand for lines left out: not those the file
    holds there itself. A `...` line is the file's own text (a docstring's, a doctest's)
    when it and its neighbours in `old` stand as consecutive whole lines of the file; such
    a line is matched as text, as any other line is, so it can place an edit only where
    the file has it."""
    line_passes = tuple(p for p in passes if p != "exact")
    lines = _lines(old)
    cut = elided_lines(old)
    return [n for n in cut if not (line_passes and _owned(body, lines, n, line_passes))]


def _owned(body: str, lines: list[str], number: int, passes: tuple[str, ...]) -> bool:
    window = lines[max(0, number - 2) : number + 1]
    if len(window) < 2:
        return False
    return find(body, "".join(line + "\n" for line in window), "", passes) is not None


def _pieces(old: str, new: str, old_cut: list[int]) -> tuple[list[_Piece], str]:
    """The pieces of `old` and `new` paired in order, or why they cannot be paired; the
    `...` lines of `old` that are not in `old_cut` are text, and so are those of `new`
    in the same places of the order."""
    every_old, new_cut = elided_lines(old), elided_lines(new)
    if len(new_cut) == len(every_old):
        new_cut = [n for n, o in zip(new_cut, every_old, strict=True) if o in old_cut]
    if len(old_cut) != len(new_cut):
        places = f"at {len(new_cut)} places" if new_cut else "nowhere"
        return [], (
            f"the old text leaves lines out with '...' at {len(old_cut)} "
            f"place{'s' if len(old_cut) > 1 else ''} (line {_numbers(old_cut)} of it), but "
            f"the new text does so {places}; the new text must leave out lines at the same "
            "places, so that they stay as they are. Nothing was changed."
        )
    pairs = zip(_cut(old, old_cut), _cut(new, new_cut), strict=True)
    pieces = []
    for (old_piece, first, last), (new_piece, _, _) in pairs:
        if not old_piece.strip():
            if new_piece.strip():
                return [], (
                    "the new text adds lines next to a '...' of the old text where the old "
                    f"text quotes no line of the file (around line {first} of it), so they "
                    "have no place; quote the line they go next to. Nothing was changed."
                )
            continue
        pieces.append(_Piece(old_piece, new_piece, first, last))
    if not pieces:
        return [], "the old text quotes no line of the file, only '...'; nothing was changed."
    return pieces, ""


def _cut(text: str, cut: list[int]) -> list[tuple[str, int, int]]:
    """`text` without the lines numbered in `cut`, as pieces (text, first line, last line)."""
    lines = _lines(text)
    pieces, start = [], 1
    for number in [*cut, len(lines) + 1]:
        rows = lines[start - 1 : number - 1]
        # Whole lines, each with its break: a last blank line is a line, not an ending.
        pieces.append(("".join(row + "\n" for row in rows), start, number - 1))
        start = number + 1
    return pieces


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def _regions(body: str, candidates: list[Found]) -> list[tuple[int, ...]]:
    """The placements of the pieces (an index into each Found), in order, that stand within
    one region; when every piece matches once in the whole file, that one placement."""
    if all(len(f.spans) == 1 for f in candidates):
        chain = tuple(0 for _ in candidates)
        return [chain] if _in_order(candidates, chain) else []
    rows = _Indents(body)
    regions: list[tuple[int, ...]] = []
    budget = [MAX_PLACEMENTS]

    def extend(chain: tuple[int, ...]) -> None:
        if len(regions) > 2 or budget[0] <= 0:
            return
        budget[0] -= 1
        if len(chain) == len(candidates):
            if rows.one_region([f.spans[k] for f, k in zip(candidates, chain, strict=True)]):
                regions.append(chain)
            return
        end = candidates[len(chain) - 1].spans[chain[-1]][1] if chain else -1
        for k, (start, _) in enumerate(candidates[len(chain)].spans):
            if start >= end:
                extend((*chain, k))

    extend(())
    return regions


def _in_order(candidates: list[Found], chain: tuple[int, ...]) -> bool:
    spans = [f.spans[k] for f, k in zip(candidates, chain, strict=True)]
    return all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))


class _Indents:
    """The file's lines and their indentation in columns, to tell one region from two: the
    lines left out between two pieces go no shallower than the pieces, and no shallower
    than one level inside a line that opens a block (`def f():`, `if x {`)."""

    def __init__(self, body: str) -> None:
        self.rows = body.split("\n")
        self.starts = [0]
        for row in self.rows[:-1]:
            self.starts.append(self.starts[-1] + len(row) + 1)

    def line(self, offset: int) -> int:
        return bisect_right(self.starts, offset) - 1

    def depth(self, row: int) -> int | None:
        text = self.rows[row].expandtabs(TAB)
        return len(text) - len(text.lstrip()) if text.strip() else None

    def one_region(self, spans: list[tuple[int, int]]) -> bool:
        lines = [(self.line(s), self.line(max(s, e - 1))) for s, e in spans]
        depths = [self.depth(r) for a, b in lines for r in range(a, b + 1)]
        least = min((d for d in depths if d is not None), default=0)
        for (_, last), (first, _) in zip(lines, lines[1:], strict=False):
            opener = self.rows[last].rstrip().endswith(OPENERS)
            floor = (self.depth(last) or 0) + 1 if opener else least
            gap = (self.depth(r) for r in range(last + 1, first))
            if any(d is not None and d < floor for d in gap):
                return False
        return True


def _lines_of(body: str, candidates: list[Found], chain: tuple[int, ...]) -> tuple[int, int]:
    first, last = candidates[0].spans[chain[0]][0], candidates[-1].spans[chain[-1]][1]
    return body.count("\n", 0, first) + 1, body.count("\n", 0, max(first, last - 1)) + 1


def _joined(candidates: list[Found], chain: tuple[int, ...]) -> Found:
    splices = tuple(f.splices[k] for f, k in zip(candidates, chain, strict=True))
    spans = tuple(f.spans[k] for f, k in zip(candidates, chain, strict=True))
    return Found("elided", (candidates[0].lines[chain[0]],), splices, spans)


def _numbers(numbers) -> str:
    shown = ", ".join(str(n) for n in list(numbers)[:12])
    return shown + (f" and {len(numbers) - 12} more" if len(numbers) > 12 else "")
