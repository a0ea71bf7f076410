"""The repository map of one repository: ranked, fitted to its budget, in two parts.

`RepoMaps` is the symbol cache (`symbolcache`) that also builds maps: `build` takes the
current symbols, updates the reference graph from the paths changed since its last
version, ranks it towards the selected and pinned files and fits the `main` part to the
budget; that part changes only when files or the selection change (it sits in the cached
prefix). `focus`, ranked towards identifiers named in recent messages, is sent after the
history. Files over the size cap, binary files and other languages appear by path only.
`warm_in_background` makes the first build at start-up; a turn waits for it a few seconds
at most (`wait_warm`, and `progress` says how far it has got). Non-goals: where the texts go in
the prompt (contextcore), reading and parsing files (`symbolcache`).
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from chat.repo import boundary, git
from chat.repo.repomap import render
from chat.repo.repomap.graph import Graph, GraphIndex, initial_tiers, pagerank
from chat.repo.repomap.store import SymbolStore
from chat.repo.repomap.symbolcache import SymbolCache, inside
from chat.repo.repomap.symbols import FileSymbols, language_of
from chat.repo.suggest.bodies import BodyIndex
from contextcore.files import DEFAULT_SIZE_CAP
from history.markup.render import warm_lexers

MAX_TOKENS = 8000
WINDOW_SHARE = 16  # the map's default budget: a sixteenth of the model's window
FOCUS_SHARE = 4  # the focus part: a quarter of the map's budget
PINNED_WEIGHT = 2.0
WARM_NICE = 10  # the start-up build's workers yield the cores to the page and to turns
RERANK_SHARE = 20  # rank again once a twentieth of the files were edited since the last time
log = logging.getLogger(__name__)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


def map_budget(window: int, setting: int | None = None) -> int:
    """ACDC_MAP_TOKENS when set (0 turns the map off), else a sixteenth of the window, at
    most 8k tokens."""
    if setting is not None:
        return max(0, setting)
    return min(MAX_TOKENS, max(0, window) // WINDOW_SHARE)


@dataclass(frozen=True)
class RepoMap:
    main: str
    focus: str
    files: int  # files in the listing the map was built from
    parsed: int  # files parsed for this build (not found in the cache)
    # Initial cache tiers of the selected and pinned files, from the reference graph
    tiers: tuple[tuple[str, str], ...] = ()


class RepoMaps(SymbolCache):
    """Process-wide symbol caches and the maps built from them; one per server (the served
    object holds it, `chat.live.served`), shared by every session."""

    def __init__(
        self,
        size_cap: int = DEFAULT_SIZE_CAP,
        workers: int | None = None,
        store: SymbolStore | None = None,
    ) -> None:
        super().__init__(size_cap, workers, store)
        self._warming: set[str] = set()
        self._warm_ended: dict[str, threading.Event] = {}  # root -> set once its build ends
        self._build_lock = threading.Lock()  # the graph index and the memo, per build
        self._graphs: dict[str, tuple[GraphIndex, int]] = {}  # root -> (index, version)
        self._main: dict[str, tuple] = {}  # root -> (key, main map, graph, rank)
        self._ranks: dict[str, tuple] = {}  # root -> (selection, files, rank, edits since)
        self._bodies: dict[str, BodyIndex] = {}  # root -> its definitions' lexical index

    def warm_in_background(self, root: Path, *, bodies: bool = False) -> threading.Thread:
        """At start-up: parse the repository and build its graph in a thread (workers at
        a lower priority), so the first turn does not pay the cold build. A turn that
        comes sooner waits for it in `symbols` (see `warming`) rather than parse twice."""
        root = Path(root).resolve()
        with self._lock:
            self._warming.add(str(root))
            self._warm_ended[str(root)] = threading.Event()
        thread = threading.Thread(
            target=self._warm,
            args=(root, time.monotonic(), bodies),
            daemon=True,
            name="acdc-map-warm",
        )
        thread.start()
        return thread

    def _warm(self, root: Path, started: float, bodies: bool = False) -> None:
        symbols = None
        try:
            symbols, parsed, version = self._versioned(root, WARM_NICE)
            with self._build_lock:
                self._graph(str(root), symbols, version)
            took = (time.monotonic() - started, time.thread_time())
            log.info(
                "map ready: %d files, %d parsed, in %.2f s (%.2f s CPU)",
                len(symbols),
                parsed,
                *took,
            )
            if self.store is not None:  # once per start: the files gone while stopped
                self.store.prune(str(root), symbols)
            warm_lexers(symbols)  # the first reply's code in them is highlighted at once
        except Exception:  # the map is an aid: a turn builds it (or goes without) later
            log.exception("warming the repository map of %s failed", root)
        finally:
            with self._lock:
                self._warming.discard(str(root))
                ended = self._warm_ended.pop(str(root), None)
            if ended is not None:
                ended.set()
        if bodies and symbols is not None:  # the suggestions' index, not the first turn's
            self._warm_bodies(root, symbols)

    def _warm_bodies(self, root: Path, symbols: dict[str, FileSymbols]) -> None:
        try:
            self._body_index(root).update(symbols)
        except Exception:  # an aid too: the first turn that suggests reads it
            log.exception("indexing the definitions of %s failed", root)

    def warming(self, root: Path) -> bool:
        """Whether the start-up build of `root`'s map is still running."""
        with self._lock:
            return str(Path(root).resolve()) in self._warming

    def wait_warm(self, root: Path, seconds: float) -> bool:
        """Until the start-up build of `root`'s map ends, for at most `seconds`; whether
        it has ended (True when none runs)."""
        with self._lock:
            ended = self._warm_ended.get(str(Path(root).resolve()))
        return ended is None or ended.wait(seconds)

    def build(
        self,
        root: Path,
        *,
        budget: int,
        count: Callable[[str], int],
        selected: Iterable[str] = (),
        pinned: Iterable[str] = (),
        recent: Iterable[str] = (),
    ) -> RepoMap:
        symbols, parsed, version = self._versioned(root, 0)
        if budget <= 0 or not symbols:
            return RepoMap("", "", len(symbols), parsed)
        selected, pinned = set(selected), set(pinned)
        in_context = selected | pinned
        key = (version, frozenset(selected), frozenset(pinned), budget)
        with self._build_lock:
            memo = self._main.get(str(root))
            if memo is None or memo[0] != key:
                memo = self._main_map(str(root), key, memo, symbols, count, in_context)
                self._main[str(root)] = memo
            _, fitted, graph, rank, tiers, _ = memo
            main = fitted.text
            focus = _focus(
                symbols, graph, rank, main, recent, budget // FOCUS_SHARE, count, in_context
            )
        return RepoMap(main, focus, len(symbols), parsed, tiers)

    def for_suggestions(self, root: Path) -> tuple[dict, Graph | None, BodyIndex] | None:
        """What the suggestions for a message rank (`chat.repo.suggest`): the symbols and
        graph of the map last built (the symbols alone when the map is off), and the
        lexical index of their bodies, brought up to date with them. None while the
        start-up build runs or the index is being read: a turn never waits for it here."""
        if self.warming(root):
            return None
        with self._build_lock:
            memo = self._main.get(str(root))
        if memo is not None:
            symbols, graph = memo[5], memo[2]
        else:
            symbols, graph = self.symbols(root)[0], None
        index = self._body_index(root)
        if not index.update(symbols, wait=False):
            return None  # another thread is reading the files: this turn goes without
        return symbols, graph, index

    def _body_index(self, root: Path) -> BodyIndex:
        with self._lock:
            key = str(Path(root).resolve())
            return self._bodies.setdefault(key, BodyIndex(Path(key)))

    def _main_map(self, root: str, key, memo, symbols, count, in_context) -> tuple:
        """(key, fitted map, graph, rank, initial tiers, symbols) for this build. After a
        few edits with the same selection and ranking, only the edited files' lines are
        brought up to date (`render.refit`); otherwise the map is fitted afresh."""
        graph = self._graph(root, symbols, key[0])
        rank, kept = self._rank(root, graph, key, memo, symbols)
        budget = key[3] - key[3] // FOCUS_SHARE
        fitted = None
        if kept and memo is not None and memo[0][1:] == key[1:]:
            fitted = render.refit(memo[1], memo[5], symbols, budget=budget, count=count)
        if fitted is None:
            fitted = render.fit(
                symbols, graph, rank, budget=budget, count=count, leave_out=in_context
            )
        # Tiers only matter on a first request; they follow the ranking's refreshes.
        tiers = memo[4] if kept and memo is not None else initial_tiers(graph, in_context)
        return key, fitted, graph, rank, tiers, symbols

    def _graph(self, root: str, symbols: dict[str, FileSymbols], version: int) -> Graph:
        """The graph of `symbols` (of that version), from the index's rows of the version
        it saw last: only the paths changed in between are looked at. Under the build lock."""
        index, seen = self._graphs.get(root, (GraphIndex(), -1))
        graph = index.update(symbols, self._versions[root].between(seen, version))
        self._graphs[root] = (index, version)
        return graph

    def _rank(self, root: str, graph, key, memo, symbols) -> tuple[dict, bool]:
        """The ranking, computed again when the selection or the set of files changed, or
        when a twentieth of the files were edited since it was; a few edits in between
        are rendered with the kept ranking (their new signatures show at once)."""
        edited = 0
        if memo is not None:
            between = self._versions[root].between(memo[0][0], key[0])
            edited = len(graph.files) if between is None else len(between)
        selected, pinned = key[1], key[2]
        selection = (selected, pinned)
        kept = self._ranks.get(root)
        if kept and kept[0] == selection and kept[1] == graph.files:
            total = kept[3] + edited
            if total * RERANK_SHARE < max(1, len(graph.files)):
                self._ranks[root] = (*kept[:3], total)
                return kept[2], True
        personal = {p: PINNED_WEIGHT if p in pinned else 1.0 for p in selection[0] | selection[1]}
        rank = pagerank(graph, {p: w for p, w in personal.items() if p in symbols})
        self._ranks[root] = (selection, graph.files, rank, 0)
        return rank, False


def _focus(symbols, graph, rank, main, recent, budget, count, in_context) -> str:
    """Definitions of identifiers the recent messages name, from files neither in `main`
    nor in the context; the named definitions first, then by the main map's ranking."""
    words = {w for text in recent for w in _WORD.findall(text)}
    named = {p for word in words for p in graph.defined_in.get(word, ())}
    shown = {line.rstrip(":") for line in main.splitlines() if not line.startswith(" ")}
    named = {p for p in named if git.shown(p) not in shown} - set(in_context)
    if not named:
        return ""
    subset = {p: symbols[p] for p in sorted(named)}
    fitted = render.fit(
        subset, graph, rank, budget=budget, count=count, paths_too=False, prefer=words, intro=""
    )
    return fitted.text


def outline(root: Path, path: str, maps: RepoMaps) -> str:
    """One file's outline (signatures only), or ValueError with a reason to show."""
    root = Path(root).resolve()
    name = git.short(path)
    judged = boundary.verdict(path, root=root)
    if not judged.ok:
        raise ValueError(f"{name}: {judged.reason}")
    if not language_of(path):
        raise ValueError(f"{name}: acdc has no grammar for this kind of file")
    try:
        is_file = (root / path).is_file()
    except (OSError, ValueError) as exc:  # a name the filesystem refuses (too long …)
        reason = getattr(exc, "strerror", None) or exc
        raise ValueError(f"{name}: the filesystem refuses this path ({reason})") from None
    if not is_file:
        raise ValueError(f"{name}: no such file")
    if not inside(root, os.path.join(root, path)):
        raise ValueError(f"{name}: outside the repository")
    found, _ = maps.file_symbols(root, path)
    return render.outline_text(path, found)
