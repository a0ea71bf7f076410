"""The map as text: the best-ranked definitions that fit a token budget, as an outline.

Each file is a line with its path and a colon, then its chosen definitions' signatures
indented by nesting (a chosen method brings its class along); bodies are elided. Files
without chosen definitions may follow as bare paths while the budget lasts. The text is
sorted by path, not by rank: ranking decides what is in, the order stays put, so a change
in one file changes the lines of that file and little else. A path that would not read as
one line naming one file (a line break or a colon in it) is written as a JSON string
(`chat.repo.git.shown`), so a file name never splits the map. Invariant: the result never
counts more than the budget. Definitions in tests (by path: `test/`, `__tests__/`,
`x.test.js`, `test_x.py` …) and in callbacks come after every other, and a name a file
defines again under the same parent (a test's 27 `fn1` callbacks) is one candidate.
Non-goals: ranking itself (graph), reading files (builder).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from chat.repo.git import shown
from chat.repo.repomap.graph import Graph, definition_scores, ordered_files
from chat.repo.repomap.symbols import Definition, FileSymbols

INTRO = "Signatures of the repository's most relevant definitions, by file (bodies elided):"
MAX_MISSES = 64  # candidates in a row that did not fit before the budget counts as full
TEST_FOLDERS = frozenset({"test", "tests", "__tests__", "spec", "specs"})


@dataclass(frozen=True)
class Fitted:
    """A map's text and what it holds: definition indexes by file, and bare paths."""

    text: str
    chosen: Mapping[str, frozenset[int]]
    bare: frozenset[str]


def outline_lines(symbols: FileSymbols, chosen: Collection[int] | None = None) -> list[str]:
    """A file's definition lines (all, or the indexes in `chosen`), indented by nesting."""
    return [
        "  " * (d.depth + 1) + d.signature
        for i, d in enumerate(symbols.definitions)
        if chosen is None or i in chosen
    ]


def outline_text(path: str, symbols: FileSymbols) -> str:
    """One file as its outline: what the `outline` tool and the picker's outline state send."""
    lines = outline_lines(symbols)
    name = shown(path)
    return "\n".join([f"{name}:", *lines]) if lines else f"{name}: (no definitions found)"


def fit(
    symbols: Mapping[str, FileSymbols],
    graph: Graph,
    rank: Mapping[str, float],
    *,
    budget: int,
    count: Callable[[str], int],
    leave_out: Collection[str] = (),
    paths_too: bool = True,
    prefer: Collection[str] = (),
    intro: str = INTRO,
) -> Fitted:
    """The map: definitions by score until `budget` tokens, then bare paths by rank.
    Definitions named in `prefer` come before every other."""
    if budget <= 0:
        return Fitted("", {}, frozenset())
    scores = definition_scores(graph, rank)
    candidates = [
        (*_order(scores, rank, path, found.definitions[index], prefer), path, index)
        for path, found in symbols.items()
        if path not in leave_out
        for index in distinct(found)
    ]
    candidates.sort()
    chosen: dict[str, set[int]] = {}
    spent, misses = count(intro) + 1, 0
    for *_, path, index in candidates:
        found = symbols[path]
        picked = chosen.get(path, set())
        wanted = [i for i in _with_parents(found, index) if i not in picked]
        cost = sum(
            count(found.definitions[i].signature) + 1 + found.definitions[i].depth for i in wanted
        )
        cost += 0 if path in chosen else count(path) + 2
        if spent + cost > budget:
            misses += 1
            if misses >= MAX_MISSES:
                break
            continue
        misses = 0
        chosen.setdefault(path, set()).update(wanted)
        spent += cost
    bare: set[str] = set()
    if paths_too:
        for path in ordered_files(rank):
            if path in chosen or path in leave_out:
                continue
            cost = count(path) + 1
            if spent + cost > budget:
                break
            bare.add(path)
            spent += cost
    return _trimmed(symbols, chosen, bare, budget, count, intro)


def refit(
    previous: Fitted,
    old: Mapping[str, FileSymbols],
    new: Mapping[str, FileSymbols],
    *,
    budget: int,
    count: Callable[[str], int],
    intro: str = INTRO,
) -> Fitted | None:
    """`previous` with the edited files' lines brought up to date: the definitions chosen
    before, found again by name (with their parents). None when a file came or went or
    the result passes the budget: then the caller fits afresh."""
    if old.keys() != new.keys():
        return None
    chosen = {path: set(indexes) for path, indexes in previous.chosen.items()}
    for path, indexes in previous.chosen.items():
        if new[path] is old[path]:
            continue
        names = {old[path].definitions[i].name for i in indexes}
        picked: set[int] = set()
        for index in distinct(new[path]):
            if new[path].definitions[index].name in names:
                picked.update(_with_parents(new[path], index))
        chosen[path] = picked
    chosen = {path: indexes for path, indexes in chosen.items() if indexes}
    text = render(new, chosen, previous.bare, intro)
    if count(text) > budget:
        return None
    return Fitted(text, {p: frozenset(i) for p, i in chosen.items()}, previous.bare)


def _order(
    scores, rank, path: str, definition: Definition, prefer: Collection[str]
) -> tuple[int, int, float]:
    """A candidate's place, best first: a definition named in `prefer`, then the code's
    own before tests' and callbacks', then by the rank flowing into it."""
    name = definition.name.rpartition(".")[2]  # `res.send` is used as `send`
    named = name in prefer or definition.name in prefer
    below = definition.local or is_test(path)
    score = scores.get((path, name), 0.0) + rank.get(path, 0.0) * 1e-3
    return (0 if named else 1, int(below), -score)


def is_test(path: str) -> bool:
    """A test file, by its folder (test/, tests/, __tests__/, spec/) or its name
    (`x.test.js`, `x.spec.ts`, `test_x.py`, `x_test.go`)."""
    folders, _, name = path.lower().rpartition("/")
    if TEST_FOLDERS & set(folders.split("/")):
        return True
    stem = name.partition(".")[0]
    marked = ".test." in name or ".spec." in name
    return marked or stem.startswith("test_") or stem.endswith("_test")


def distinct(found: FileSymbols) -> list[int]:
    """The indexes of a file's definitions, without repeats: a name defined again under
    the same parent (27 `fn1` callbacks in one test file) is its first definition."""
    seen: set[tuple[str, str]] = set()
    parents: list[str] = []  # the names enclosing the current definition, by depth
    kept = []
    for index, definition in enumerate(found.definitions):
        del parents[definition.depth :]
        key = (parents[-1] if parents else "", definition.name)
        parents.append(definition.name)
        if key not in seen:
            seen.add(key)
            kept.append(index)
    return kept


def _with_parents(found: FileSymbols, index: int) -> list[int]:
    result = [index]
    depth = found.definitions[index].depth
    for i in range(index - 1, -1, -1):
        if depth == 0:
            break
        if found.definitions[i].depth < depth:
            result.append(i)
            depth = found.definitions[i].depth
    return sorted(result)


def render(
    symbols: Mapping[str, FileSymbols],
    chosen: Mapping[str, Collection[int]],
    bare: Collection[str],
    intro: str = INTRO,
) -> str:
    lines = [intro] if intro else []
    for path in sorted(set(chosen) | set(bare)):
        if path in chosen:
            lines += [f"{shown(path)}:", *outline_lines(symbols[path], chosen[path])]
        else:
            lines.append(shown(path))
    return "\n".join(lines) if len(lines) > bool(intro) else ""


def _trimmed(
    symbols: Mapping[str, FileSymbols],
    chosen: dict[str, set[int]],
    bare: set[str],
    budget: int,
    count: Callable[[str], int],
    intro: str,
) -> Fitted:
    """The per-line estimate can be a little off: drop bare paths, then the last-chosen
    files, until the whole text fits."""
    text = render(symbols, chosen, bare, intro)
    while text and count(text) > budget:
        if bare:
            bare.discard(max(bare))
        else:
            chosen.pop(max(chosen))
        text = render(symbols, chosen, bare, intro)
    return Fitted(text, {p: frozenset(i) for p, i in chosen.items()}, frozenset(bare))
