"""The reference graph of a repository and its personalised PageRank.

Files are nodes; a file that uses an identifier which another file defines has an edge to
it, weighted by the square root of the number of uses, divided among the files defining
that name, and lowered for private (`_name`) and very short names, which tie unrelated
files together. PageRank by power iteration in plain Python (a few thousand nodes take
milliseconds); the personalisation vector says where the walk restarts: the selected and
pinned files, or the files defining identifiers named in recent messages. Deterministic:
the same symbols and weights give the same floats, and ties are broken by path.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from chat.repo.repomap.symbols import FileSymbols

DAMPING = 0.85
ITERATIONS = 30


@dataclass(frozen=True)
class Graph:
    files: tuple[str, ...]
    # source -> {target: weight}
    edges: Mapping[str, Mapping[str, float]]
    # source -> {(target, name): weight}: which definitions a file's uses point at
    uses: Mapping[str, Mapping[tuple[str, str], float]]
    defined_in: Mapping[str, set[str]]


def name_weight(name: str) -> float:
    if name.startswith("_") or len(name) < 3:
        return 0.1
    return 1.0


class GraphIndex:
    """The graph kept up to date: after an edit only the rows of the edited file and of
    the files that use a name it defines (or defined) are computed again. Not thread-safe:
    the caller holds a lock."""

    def __init__(self) -> None:
        self._symbols: dict[str, FileSymbols] = {}
        self._defined: dict[str, set[str]] = {}
        self._readers: dict[str, set[str]] = {}  # name -> files that use it
        self._edges: dict[str, dict[str, float]] = {}
        self._uses: dict[str, dict[tuple[str, str], float]] = {}
        self._files: tuple[str, ...] | None = None

    def update(
        self, symbols: Mapping[str, FileSymbols], hint: Iterable[str] | None = None
    ) -> Graph:
        """The graph of `symbols`; `hint`, when given, holds every path whose symbols may
        differ from the last update's (the others are not looked at)."""
        old = self._symbols
        candidates = old.keys() | symbols.keys() if hint is None else hint
        changed = {p for p in candidates if old.get(p) is not symbols.get(p)}
        names: set[str] = set()
        for path in changed:
            before, after = (_defined(old.get(path)), _defined(symbols.get(path)))
            for found, sign in ((old.get(path), -1), (symbols.get(path), 1)):
                if found is not None:
                    self._index(path, found, sign)
            # A row depends on a name only through the files defining it: an edit that
            # keeps a file's names (a changed signature, a new use) moves no other row.
            names |= before ^ after
        came_or_went = any((p in old) != (p in symbols) for p in changed)
        if hint is None:
            self._symbols = dict(symbols)
        else:
            for path in changed:
                if path in symbols:
                    self._symbols[path] = symbols[path]
                else:
                    del self._symbols[path]
        for source in changed:
            self._edges.pop(source, None)
            self._uses.pop(source, None)
            if source in symbols:
                self._set_row(source, self._uses_of(source, self._symbols[source].references))
        readers = {s for name in names for s in self._readers.get(name, ())} - changed
        for source in readers:
            self._patch(source, names)
        if came_or_went or self._files is None:
            self._files = tuple(sorted(symbols))
        return Graph(self._files, self._edges, self._uses, self._defined)

    def _index(self, path: str, found: FileSymbols, sign: int) -> None:
        """Add (sign 1) or remove (-1) a file's definitions and uses."""
        defined = _defined(found)
        if sign > 0:  # the common case (every file on a first build): no list of pairs
            for name in defined:
                self._defined.setdefault(name, set()).add(path)
            for name, _ in found.references:
                self._readers.setdefault(name, set()).add(path)
            return
        for name, table in [(n, self._defined) for n in defined] + [
            (n, self._readers) for n, _ in found.references
        ]:
            holders = table.setdefault(name, set())
            holders.discard(path)
            if not holders:
                del table[name]

    def _uses_of(
        self, source: str, references: Iterable[tuple[str, int]]
    ) -> dict[tuple[str, str], float]:
        uses: dict[tuple[str, str], float] = {}
        for name, count in references:
            holders = self._defined.get(name)
            if not holders or holders == {source}:
                continue
            weight = math.sqrt(count) * name_weight(name) / len(holders)
            for target in holders:
                if target != source:
                    uses[(target, name)] = weight
        return uses

    def _patch(self, source: str, names: set[str]) -> None:
        """A row again for the uses of `names` only (their definitions moved)."""
        references = self._symbols[source].references
        mine = []
        for name in sorted(names):
            at = bisect_left(references, (name,))
            if at < len(references) and references[at][0] == name:
                mine.append(references[at])
        uses = {k: w for k, w in self._uses.get(source, {}).items() if k[1] not in names}
        uses.update(self._uses_of(source, mine))
        self._edges.pop(source, None)
        self._uses.pop(source, None)
        self._set_row(source, uses)

    def _set_row(self, source: str, uses: dict[tuple[str, str], float]) -> None:
        """Summed in name order, as a row built afresh is, so the floats are the same."""
        if not uses:
            return
        row: dict[str, float] = {}
        for (target, _), weight in sorted(uses.items(), key=lambda item: item[0][1]):
            row[target] = row.get(target, 0.0) + weight
        self._edges[source], self._uses[source] = row, uses


def _defined(found: FileSymbols | None) -> set[str]:
    """The names a file defines, as they are used: `res.send` is used as `send`."""
    if found is None:
        return set()
    return {d.name.rpartition(".")[2] for d in found.definitions}


def pagerank(graph: Graph, personal: Mapping[str, float]) -> dict[str, float]:
    """Rank of every file; `personal` weights restart nodes (empty: every file alike).
    A fixed number of steps from a fixed start: the same graph gives the same floats."""
    files = graph.files
    if not files:
        return {}
    at = {f: i for i, f in enumerate(files)}
    restart = [max(0.0, personal.get(f, 0.0)) for f in files]
    if not any(restart):
        restart = [1.0] * len(files)
    total = sum(restart)
    restart = [w / total for w in restart]
    rows = []
    for source in sorted(graph.edges):
        row = graph.edges[source]
        out = sum(row.values())
        rows.append((at[source], [(at[t], w / out) for t, w in sorted(row.items())]))
    linked = {i for i, _ in rows}
    dangling_nodes = [i for i in range(len(files)) if i not in linked]
    rank = [1.0 / len(files)] * len(files)
    for _ in range(ITERATIONS):
        dangling = sum(rank[i] for i in dangling_nodes)
        base = 1 - DAMPING + DAMPING * dangling
        nxt = [base * r for r in restart]
        for source, targets in rows:
            share = DAMPING * rank[source]
            for target, weight in targets:
                nxt[target] += share * weight
        rank = nxt
    return dict(zip(files, rank, strict=True))


def definition_scores(graph: Graph, rank: Mapping[str, float]) -> dict[tuple[str, str], float]:
    """(file, name) -> the rank that flows into that definition along the uses of it."""
    scores: dict[tuple[str, str], float] = {}
    for source, uses in graph.uses.items():
        share = rank[source] / sum(graph.edges[source].values())
        for key, weight in uses.items():
            scores[key] = scores.get(key, 0.0) + share * weight
    return scores


def ordered_files(rank: Mapping[str, float]) -> list[str]:
    """Best first; equal ranks by path."""
    return sorted(rank, key=lambda f: (-round(rank[f], 12), f))


def initial_tiers(graph: Graph, files: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """Seed 000's tiers from the graph: of the given files, the most referenced go deepest
    (the first third of those referenced at all to L1, the next to L2, the rest to L3);
    files nothing refers to start as active."""
    wanted = set(files)
    incoming = dict.fromkeys(wanted, 0.0)
    for row in graph.edges.values():
        for target, weight in row.items():
            if target in wanted:
                incoming[target] += weight
    used = sorted((p for p in wanted if incoming[p] > 0), key=lambda p: (-incoming[p], p))
    third = max(1, -(-len(used) // 3))
    tiers = {p: ("L1", "L2", "L3")[min(i // third, 2)] for i, p in enumerate(used)}
    return tuple(sorted((p, tiers.get(p, "active")) for p in wanted))
