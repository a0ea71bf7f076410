"""Recall of a fix's answer in a text sent to the model: `named`, `shown` and `lines`.

`named`: the share of the answer's files whose path is anywhere in the text. `lines`:
the share of the answer's changed lines the text holds, where a line is held only as a
piece of a body: the text has it among at least `RUN` consecutive non-blank lines of the
file, in the file's order (so a lone signature, a `}` or a `return` elsewhere does not
count; a changed blank line stands for the nearest line above it that is not).
`shown`: the share of the answer's files of which the text holds at least one
changed line. Lines are compared stripped of indentation and of a leading line-number
gutter (`12│`, `12:`), so a tool's rendering of a region still counts. Plain Python, no
Django: every contestant (acdc's request, BM25's pieces, aider's map) is judged by it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

RUN = 3
GUTTER = re.compile(r"^\s*(?:\d+\s*[│|:]|[│|⋮])\s?")


def normalized(line: str) -> str:
    return GUTTER.sub("", line, count=1).strip()


def _runs(lines: Sequence[str]) -> set[tuple[str, ...]]:
    kept = [n for n in map(normalized, lines) if n]
    return {tuple(kept[i : i + RUN]) for i in range(len(kept) - RUN + 1)}


@dataclass(frozen=True)
class Judge:
    """A text sent to the model, ready to be asked about any file."""

    text: str
    runs: frozenset[tuple[str, ...]]

    @classmethod
    def of(cls, text: str) -> Judge:
        return cls(text, frozenset(_runs(text.splitlines())))

    def held(self, source: str) -> set[int]:
        """The 1-based line numbers of `source` the text holds in a run of `RUN` lines."""
        kept = [(n, t) for n, t in enumerate(map(normalized, source.splitlines()), 1) if t]
        held: set[int] = set()
        for i in range(len(kept) - RUN + 1):
            window = kept[i : i + RUN]
            if tuple(t for _, t in window) in self.runs:
                held.update(n for n, _ in window)
        return held


@dataclass(frozen=True)
class Recall:
    named: float
    shown: float
    lines: float


def wanted_lines(source: str, changed: Iterable[int]) -> set[int]:
    """The changed lines, a blank one standing for the nearest non-blank line above it
    (below it at the top of the file): a blank line is never held by itself."""
    lines = source.splitlines()
    blank = [not normalized(line) for line in lines]
    wanted: set[int] = set()
    for number in changed:
        index = min(max(number, 1), max(len(lines), 1)) - 1
        up = next((i for i in range(index, -1, -1) if not blank[i]), None) if lines else None
        down = next((i for i in range(index, len(lines)) if not blank[i]), None)
        chosen = up if up is not None else down
        if chosen is not None:
            wanted.add(chosen + 1)
    return wanted


def recall(judge: Judge, answer: Mapping[str, Iterable[int]], sources: Mapping[str, str]) -> Recall:
    """`answer`: path -> changed line numbers; `sources`: path -> the file's text."""
    named = shown = hits = total = 0
    for path, changed in answer.items():
        source = sources.get(path, "")
        wanted = wanted_lines(source, changed)
        found = wanted & judge.held(source)
        named += path in judge.text
        shown += bool(found)
        hits, total = hits + len(found), total + len(wanted)
    files = max(len(answer), 1)
    return Recall(named / files, shown / files, hits / max(total, 1))
