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
from collections.abc import Mapping
from dataclasses import dataclass

from chat.repo.repomap.symbols import FileSymbols

DAMPING = 0.85
ITERATIONS = 40
TOLERANCE = 1e-9


@dataclass(frozen=True)
class Graph:
    files: tuple[str, ...]
    # source -> {target: weight}
    edges: Mapping[str, Mapping[str, float]]
    # (target, name) -> weight of the uses of that definition, per source file
    uses: Mapping[tuple[str, str], Mapping[str, float]]
    defined_in: Mapping[str, tuple[str, ...]]


def name_weight(name: str) -> float:
    if name.startswith("_") or len(name) < 3:
        return 0.1
    return 1.0


def build_graph(symbols: Mapping[str, FileSymbols]) -> Graph:
    defined: dict[str, set[str]] = {}
    for path, found in symbols.items():
        for definition in found.definitions:
            defined.setdefault(definition.name, set()).add(path)
    defined_in = {name: tuple(sorted(paths)) for name, paths in defined.items()}
    edges: dict[str, dict[str, float]] = {}
    uses: dict[tuple[str, str], dict[str, float]] = {}
    for source in sorted(symbols):
        for name, count in symbols[source].references:
            targets = [t for t in defined_in.get(name, ()) if t != source]
            if not targets:
                continue
            weight = math.sqrt(count) * name_weight(name) / len(defined_in[name])
            row = edges.setdefault(source, {})
            for target in targets:
                row[target] = row.get(target, 0.0) + weight
                uses.setdefault((target, name), {})[source] = weight
    return Graph(tuple(sorted(symbols)), edges, uses, defined_in)


def pagerank(graph: Graph, personal: Mapping[str, float]) -> dict[str, float]:
    """Rank of every file; `personal` weights restart nodes (empty: every file alike)."""
    files = graph.files
    if not files:
        return {}
    restart = {f: personal.get(f, 0.0) for f in files if personal.get(f, 0.0) > 0}
    if not restart:
        restart = {f: 1.0 for f in files}
    total = sum(restart.values())
    restart = {f: w / total for f, w in restart.items()}
    out_weight = {s: sum(row.values()) for s, row in graph.edges.items()}
    rank = dict.fromkeys(files, 1.0 / len(files))
    for _ in range(ITERATIONS):
        dangling = sum(rank[f] for f in files if not out_weight.get(f))
        nxt = {f: (1 - DAMPING + DAMPING * dangling) * restart.get(f, 0.0) for f in files}
        for source, row in graph.edges.items():
            share = DAMPING * rank[source] / out_weight[source]
            for target, weight in row.items():
                nxt[target] += share * weight
        change = sum(abs(nxt[f] - rank[f]) for f in files)
        rank = nxt
        if change < TOLERANCE:
            break
    return rank


def definition_scores(graph: Graph, rank: Mapping[str, float]) -> dict[tuple[str, str], float]:
    """(file, name) -> the rank that flows into that definition along the uses of it."""
    out_weight = {s: sum(row.values()) for s, row in graph.edges.items()}
    scores: dict[tuple[str, str], float] = {}
    for key, sources in graph.uses.items():
        scores[key] = sum(rank[s] * w / out_weight[s] for s, w in sources.items())
    return scores


def ordered_files(rank: Mapping[str, float]) -> list[str]:
    """Best first; equal ranks by path."""
    return sorted(rank, key=lambda f: (-round(rank[f], 12), f))
