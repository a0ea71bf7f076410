"""A three-way merge on lines, with the semantics of `git merge-file`.

`merge3(base, ours, theirs)` takes the version both sides started from and two changed
versions. Lines that both sides kept as in the base anchor the merge; between two anchors,
a change made on one side only is taken, the same change made on both sides is taken once,
and different changes on both sides (overlapping or touching, with no kept line between
them) are a conflict: the merge then has no text, only where the conflicts are. Lines keep
their endings, so a CRLF file merges as itself. Non-goals: conflict markers (a conflict
writes nothing), word-level merges, choosing a side.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher

SMALL = 250_000  # line pairs difflib may compare at once


@dataclass(frozen=True)
class Conflict:
    ours_start: int  # 1-based first line of the conflicting region in `ours`
    ours_end: int  # its last line (ours_start - 1 when ours deleted the region)


@dataclass(frozen=True)
class Merge:
    text: str | None  # the merged text, None when there is a conflict
    conflicts: tuple[Conflict, ...] = ()


def merge3(base: str, ours: str, theirs: str) -> Merge:
    """`ours` with the change from `base` to `theirs` merged in, or where they conflict."""
    b, o, t = (text.splitlines(keepends=True) for text in (base, ours, theirs))
    out: list[str] = []
    conflicts: list[Conflict] = []
    zb = zo = zt = 0  # where the region after the last anchor starts on each side
    for sb, eb, so, st in [*_anchors(b, o, t), (len(b), len(b), len(o), len(t))]:
        base_part, our_part, their_part = b[zb:sb], o[zo:so], t[zt:st]
        if our_part == their_part or their_part == base_part:
            out += our_part
        elif our_part == base_part:
            out += their_part
        else:
            conflicts.append(Conflict(zo + 1, so))
            out += our_part
        out += b[sb:eb]
        zb, zo, zt = eb, so + (eb - sb), st + (eb - sb)
    if conflicts:
        return Merge(None, tuple(conflicts))
    return Merge("".join(out))


def _anchors(b: list[str], o: list[str], t: list[str]) -> list[tuple[int, int, int, int]]:
    """Runs of base lines that both sides kept: (base start, base end, ours start, theirs
    start), in order."""
    ours, theirs = _blocks(b, o), _blocks(b, t)
    anchors, i, j = [], 0, 0
    while i < len(ours) and j < len(theirs):
        ob, oo, on = ours[i]
        tb, tt, tn = theirs[j]
        start, end = max(ob, tb), min(ob + on, tb + tn)
        if start < end:
            anchors.append((start, end, oo + start - ob, tt + start - tb))
        if ob + on < tb + tn:
            i += 1
        else:
            j += 1
    return anchors


def _blocks(a: list[str], b: list[str]) -> list[tuple[int, int, int]]:
    return [block for block in matching_blocks(a, b) if block[2]]


def matching_blocks(a: list[str], b: list[str]) -> list[tuple[int, int, int]]:
    """Runs of equal lines (i in a, j in b, length), in order, ending with (len, len, 0).
    The lines both texts start and end with are one run each; the middle is anchored on
    lines that stand once in each (patience diff) and only the gaps go to difflib, with
    blank lines as junk: difflib alone compares every blank line of a 1 MB file with every
    other and takes seconds."""
    size = min(len(a), len(b))
    head = next((k for k in range(size) if a[k] != b[k]), size)
    tail = next((k for k in range(size - head) if a[-1 - k] != b[-1 - k]), size - head)
    blocks = [(0, 0, head)] if head else []
    middle = _middle(a[head : len(a) - tail], b[head : len(b) - tail])
    blocks += [(x + head, y + head, n) for x, y, n in middle]
    if tail:
        blocks.append((len(a) - tail, len(b) - tail, tail))
    return [*_joined(blocks), (len(a), len(b), 0)]


def _middle(a: list[str], b: list[str]) -> list[tuple[int, int, int]]:
    if len(a) * len(b) <= SMALL:
        return _difflib(a, b)
    blocks: list[tuple[int, int, int]] = []
    done_a = done_b = 0
    for i, j in [*_anchors_once(a, b), (len(a), len(b))]:
        gap = _difflib(a[done_a:i], b[done_b:j])
        blocks += [(x + done_a, y + done_b, n) for x, y, n in gap]
        if i < len(a):
            blocks.append((i, j, 1))
        done_a, done_b = i + 1, j + 1
    return blocks


def _anchors_once(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    """Pairs of lines that stand once in each text, the longest run of them in order."""
    in_a, in_b = Counter(a), Counter(b)
    where_b = {line: j for j, line in enumerate(b) if in_b[line] == 1}
    pairs = [(i, where_b[line]) for i, line in enumerate(a) if in_a[line] == 1 and line in where_b]
    tops: list[int] = []  # the smallest last j of a run of each length (patience sorting)
    ends: list[int] = []  # the pair ending that run
    before: list[int] = []  # each pair's predecessor in its run
    for k, (_, j) in enumerate(pairs):
        at = bisect_left(tops, j)
        before.append(ends[at - 1] if at else -1)
        if at == len(tops):
            tops.append(j)
            ends.append(k)
        else:
            tops[at], ends[at] = j, k
    run, k = [], ends[-1] if ends else -1
    while k != -1:
        run.append(pairs[k])
        k = before[k]
    return run[::-1]


def _difflib(a: list[str], b: list[str]) -> list[tuple[int, int, int]]:
    if not a or not b:
        return []
    blocks = SequenceMatcher(_blank, a, b, False).get_matching_blocks()
    return [(x, y, n) for x, y, n in blocks if n]


def _joined(blocks: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    out: list[tuple[int, int, int]] = []
    for x, y, n in blocks:
        if out and out[-1][0] + out[-1][2] == x and out[-1][1] + out[-1][2] == y:
            out[-1] = (out[-1][0], out[-1][1], out[-1][2] + n)
        else:
            out.append((x, y, n))
    return out


def _blank(line: str) -> bool:
    return not line.strip()
