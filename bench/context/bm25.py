"""The simplest strong baseline: BM25 over 40-line pieces of the repository's source files.

Every source file (by the repository's suffixes, tests included: BM25 knows no better) is
cut into pieces of `PIECE_LINES` lines; the pieces are ranked by Okapi BM25 (k1 1.2, b
0.75) against the query's words, identifiers split at underscores and case changes as
well as kept whole, and the best are written out, each headed by its path and lines, as
long as they fit the token budget (a piece too big for what is left is passed over).
Non-goals: stemming, stop words, anything smarter than what anyone could write in an
afternoon; it is the bar, not a contestant to tune.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass

PIECE_LINES = 40
K1, B = 1.2, 0.75
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def terms(text: str) -> list[str]:
    """Words of `text`, lower-cased: each identifier whole and in its parts."""
    found: list[str] = []
    for word in WORD.findall(text):
        parts = [p.lower() for chunk in word.split("_") for p in PART.findall(chunk)]
        found.append(word.lower())
        if len(parts) > 1:
            found += parts
    return found


@dataclass(frozen=True)
class Piece:
    path: str
    start: int  # 1-based first line
    lines: tuple[str, ...]

    def render(self) -> str:
        end = self.start + len(self.lines) - 1
        return f"{self.path} (lines {self.start}-{end}):\n" + "\n".join(self.lines) + "\n"


def pieces(sources: Mapping[str, str]) -> list[Piece]:
    cut: list[Piece] = []
    for path, text in sorted(sources.items()):
        lines = text.splitlines()
        for start in range(0, len(lines), PIECE_LINES):
            cut.append(Piece(path, start + 1, tuple(lines[start : start + PIECE_LINES])))
    return cut


def ranked(query: str, cut: list[Piece]) -> list[Piece]:
    """`cut` by BM25 score against `query`, best first (ties: repository order)."""
    bags = [Counter(terms(p.path + "\n" + "\n".join(p.lines))) for p in cut]
    if not bags:
        return []
    average = sum(sum(b.values()) for b in bags) / len(bags) or 1.0
    frequency: Counter[str] = Counter()
    for bag in bags:
        frequency.update(bag.keys())
    wanted = set(terms(query))
    scores = []
    for index, bag in enumerate(bags):
        length = sum(bag.values())
        score = 0.0
        for term in wanted & bag.keys():
            idf = math.log(1 + (len(bags) - frequency[term] + 0.5) / (frequency[term] + 0.5))
            tf = bag[term]
            score += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / average))
        scores.append((-score, index))
    return [cut[index] for score, index in sorted(scores) if score < 0]


def fill(query: str, sources: Mapping[str, str], budget: int, count: Callable[[str], int]) -> str:
    """The best pieces for `query` that fit `budget` tokens, as one text."""
    chosen: list[str] = []
    left = budget
    for piece in ranked(query, pieces(sources)):
        text = piece.render()
        cost = count(text)
        if cost <= left:
            chosen.append(text)
            left -= cost
        if left < 50:
            break
    return "\n".join(chosen)
