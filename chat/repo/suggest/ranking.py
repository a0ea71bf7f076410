"""The regions of the repository that a message points at, ranked and fitted to a budget.

Three signals, added per definition: the message names it (an identifier of the message,
or less, of the recent turns, is its name), its body matches the message's words (BM25
over the definitions, `bodies`), and its file ranks high in the map's graph personalised
towards the files that define the named identifiers and the paths the message names.
A region is a whole definition when it is short enough, else the lines around the first
line holding a word of the message. Files in the context are never suggested, nor
generated or vendored ones (`bodies` never indexes them), nor what the person removed;
what the person pinned comes first. Non-goals: the session's state, rendering.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from chat.repo.repomap.graph import Graph, pagerank
from chat.repo.repomap.symbols import Definition, FileSymbols
from chat.repo.suggest import bodies
from contextcore.prompt.suggested import Region, region_block

NAMED, RECENT_NAMED, PATH_NAMED, LEXICAL, GRAPH = 3.0, 1.0, 1.0, 2.0, 0.5
MIN_SCORE = 0.6  # below it a definition is a guess not worth its tokens
MAX_LINES = 60  # a longer definition shows the lines around what matched
AROUND = 12  # lines before and after that line
MAX_REGIONS = 8
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_PATH = re.compile(r"[\w./-]*[\w-]+(?:/[\w.-]+|\.\w{1,5})")
# fmt: off
STOPWORDS = frozenset({
    "the", "and", "for", "with", "that", "this", "from", "into", "when", "then", "than", "not",
    "but", "are", "was", "were", "has", "have", "had", "its", "can", "could", "should", "would",
    "will", "shall", "may", "might", "must", "does", "did", "done", "make", "made", "use", "used",
    "using", "fix", "fixed", "fixes", "add", "added", "adds", "remove", "removed", "change",
    "changed", "update", "updated", "new", "old", "all", "any", "some", "one", "two", "now",
    "also", "only", "just", "more", "most", "less",
})
# fmt: on


@dataclass(frozen=True)
class Message:
    """What the ranking reads of the conversation."""

    text: str
    recent: tuple[str, ...] = ()

    def identifiers(self) -> set[str]:
        return set(_IDENTIFIER.findall(self.text))

    def recent_identifiers(self) -> set[str]:
        return {w for text in self.recent for w in _IDENTIFIER.findall(text)}

    def words(self) -> set[str]:
        """The lower-case words and identifier parts BM25 looks for."""
        found: set[str] = set()
        for word in _IDENTIFIER.findall(self.text):
            found.add(word.lower())
            found.update(bodies.parts(word))
        return {w for w in found if len(w) > 2 and w not in STOPWORDS}


@dataclass
class Candidate:
    path: str
    definition: Definition
    score: float = 0.0
    why: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Choice:
    """What the person decided about suggestions in this session."""

    removed: frozenset[str] = frozenset()  # Region keys
    pinned: frozenset[str] = frozenset()


def rank(
    message: Message,
    symbols: Mapping[str, FileSymbols],
    index: bodies.BodyIndex,
    graph: Graph | None,
    in_context: Collection[str],
) -> list[Candidate]:
    """Every definition worth suggesting, best first."""
    found: dict[tuple[str, int], Candidate] = {}
    named = message.identifiers()
    _add_named(found, symbols, named, NAMED)
    _add_named(found, symbols, message.recent_identifiers() - named, RECENT_NAMED)
    hits = index.search(message.words())
    best = max((h.score for h in hits), default=0.0)
    for hit in hits:
        _add(found, hit.path, hit.definition, LEXICAL * hit.score / best, hit.words)
    paths = named_paths(message.text, symbols)
    for path in sorted(paths):  # a file the message names: its top-level definitions
        for definition in symbols[path].definitions:
            if definition.depth == 0:
                _add(found, path, definition, PATH_NAMED, [path.rpartition("/")[2]])
    _add_graph(found, graph, {c.path for c in found.values() if c.why & named} | paths)
    indexed = index.indexed()
    kept = [
        c
        for c in found.values()
        if c.path not in in_context and c.score >= MIN_SCORE and c.path in indexed
    ]
    return sorted(kept, key=lambda c: (-c.score, c.path, c.definition.line))


def _add(
    found: dict[tuple[str, int], Candidate],
    path: str,
    definition: Definition,
    score: float,
    why: Iterable[str],
) -> None:
    held = found.setdefault((path, definition.line), Candidate(path, definition))
    held.score += score
    held.why.update(why)


def _add_named(found, symbols: Mapping[str, FileSymbols], names: set[str], score: float) -> None:
    """The definitions whose name is one of `names` (inside a callback: not a name)."""
    if not names:
        return
    for path, file in symbols.items():
        for definition in file.definitions:
            short = definition.name.rpartition(".")[2]
            if short in names and not definition.local:
                _add(found, path, definition, score, [short])


def named_paths(text: str, symbols: Mapping[str, FileSymbols]) -> set[str]:
    """The files the message names by path, or by a name unique in the repository."""
    said = {p.strip("./") for p in _PATH.findall(text)}
    found = {p for p in said if p in symbols}
    by_name: dict[str, list[str]] = {}
    for path in symbols:
        by_name.setdefault(path.rpartition("/")[2], []).append(path)
    for name in said:
        matches = by_name.get(name.rpartition("/")[2], [])
        if len(matches) == 1:
            found.add(matches[0])
    return found


def _add_graph(
    found: dict[tuple[str, int], Candidate], graph: Graph | None, towards: set[str]
) -> None:
    """Raise the candidates whose file the walk from the named files reaches most."""
    if graph is None or not towards or not found:
        return
    ranks = pagerank(graph, {p: 1.0 for p in towards if p in graph.edges or p in graph.files})
    top = max((ranks.get(c.path, 0.0) for c in found.values()), default=0.0)
    if top <= 0:
        return
    for candidate in found.values():
        candidate.score += GRAPH * ranks.get(candidate.path, 0.0) / top


def regions(
    candidates: Sequence[Candidate],
    root: Path,
    *,
    budget: int,
    count: Callable[[str], int],
    choice: Choice = Choice(),
    language: Callable[[str], str] = lambda path: "",
) -> list[Region]:
    """The best candidates' regions, pinned ones first, none removed, none overlapping
    another, within `budget` tokens."""
    ordered = sorted(candidates, key=lambda c: _key(c) not in choice.pinned)
    chosen: list[Region] = []
    spent = 0
    texts: dict[str, list[str]] = {}
    for candidate in ordered:
        if len(chosen) >= MAX_REGIONS or budget - spent < 50:
            break
        if _key(candidate) in choice.removed:
            continue
        lines = texts.get(candidate.path)
        if lines is None:
            lines = texts[candidate.path] = _lines(root, candidate.path)
        region = _region(candidate, lines, language(candidate.path), choice)
        if region is None or any(_overlap(region, r) for r in chosen):
            continue
        tokens = count(region_block(region))
        if spent + tokens <= budget:
            chosen.append(region)
            spent += tokens
    return chosen


def _key(candidate: Candidate) -> str:
    return f"{candidate.path}::{candidate.definition.name}"


def _lines(root: Path, path: str) -> list[str]:
    try:
        return (Path(root) / path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError, ValueError):
        return []


def _region(candidate: Candidate, lines: list[str], language: str, choice: Choice) -> Region | None:
    definition = candidate.definition
    start, end = definition.line, min(definition.end_line, len(lines))
    if end < start:
        return None
    if end - start + 1 > MAX_LINES:
        at = _first_line_with(lines, start, end, candidate.why)
        start, end = max(start, at - AROUND), min(end, at + AROUND)
    return Region(
        path=candidate.path,
        name=definition.name,
        start=start,
        end=end,
        text="\n".join(lines[start - 1 : end]),
        why=_telling(candidate.why),
        language=language,
        pinned=_key(candidate) in choice.pinned,
    )


def _telling(words: Iterable[str]) -> tuple[str, ...]:
    """The words that matched, less the parts of an identifier that matched whole."""
    found = set(words)
    parts = {p for word in found for p in bodies.parts(word) if p != word}
    return tuple(sorted(found - parts))


def _first_line_with(lines: list[str], start: int, end: int, words: Iterable[str]) -> int:
    """The first line after the definition's own that holds one of `words`, else `start`."""
    wanted = [w.lower() for w in words]
    for number in range(start + 1, end + 1):
        low = lines[number - 1].lower()
        if any(w in low for w in wanted):
            return number
    return start


def _overlap(one: Region, other: Region) -> bool:
    return one.path == other.path and one.start <= other.end and other.start <= one.end
