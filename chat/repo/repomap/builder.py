"""The repository map of one repository: files read through the boundary, symbols cached.

`RepoMaps.build` lists the repository once (git's listing, the boundary's screen: internal
and secret-shaped files are never read and never named), parses each source file whose
(size, mtime, ctime) changed since the last look, and keeps its symbols by the sha256 of its bytes
(the picker's token counts use the same hash), in memory and on disk (`store`: a restart
parses only what changed), so an unchanged file is never parsed twice. While a file
watcher runs (`heard`), a build looks only at the files it heard change and keeps the
listing unless a path came or went; without one, every build lists and stats every file.
The map comes in two parts: `main`, ranked towards the selected and pinned files, which
changes only when files or the selection change (it sits in the cached prefix), and
`focus`, ranked towards identifiers named in recent messages, sent after the history. Files
over the size cap, binary files and other languages appear by path only. Non-goals: where
the texts go in the prompt (contextcore), rendering.
"""

from __future__ import annotations

import hashlib
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
from chat.repo.repomap.heard import Heard, Plan, Versions, came_or_went
from chat.repo.repomap.parallel import Parsing, default_workers, parse_bytes
from chat.repo.repomap.store import Row, SymbolStore
from chat.repo.repomap.symbols import NO_SYMBOLS, FileSymbols, language_of
from contextcore.files import DEFAULT_SIZE_CAP

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


@dataclass(frozen=True)
class _Looked:
    listing: list[str]  # git's, sorted
    listed: frozenset[str]  # the same, to look paths up
    screened: boundary.Screened
    symbols: dict[str, FileSymbols]  # never changed once kept: a build copies it


@dataclass(frozen=True)
class _Seen:
    stamp: tuple[int, int, int]  # size, mtime, ctime (a copy that keeps mtime changes it)
    sha256: str


class RepoMaps:
    """Process-wide symbol caches; one per server, shared by every session."""

    def __init__(
        self,
        size_cap: int = DEFAULT_SIZE_CAP,
        workers: int | None = None,
        store: SymbolStore | None = None,
    ) -> None:
        self.size_cap = size_cap
        self.workers = default_workers() if workers is None else workers
        self.store = store  # symbols on disk, read once per root, added to after each look
        self._stored: set[str] = set()  # roots whose stored symbols were read
        self._unsaved: list[Row] = []
        self._seen: dict[tuple[str, str], _Seen] = {}
        self._symbols: dict[str, FileSymbols] = {}  # sha256 -> symbols
        self._lock = threading.Lock()
        self._symbols_lock = threading.Lock()  # one listing and parse at a time
        self._warming: set[str] = set()
        self._build_lock = threading.Lock()  # the graph index and the memo, per build
        self._graphs: dict[str, tuple[GraphIndex, int]] = {}  # root -> (index, version)
        self._versions: dict[str, Versions] = {}
        self._main: dict[str, tuple] = {}  # root -> (key, main map, graph, rank)
        self._ranks: dict[str, tuple] = {}  # root -> (selection, files, rank, edits since)
        self._screens: dict[str, tuple] = {}  # root -> (listing key, boundary.Screened)
        self._looked: dict[str, _Looked] = {}  # root -> what the last build looked at
        self.heard = Heard()  # what the file watcher told of each repository since

    def warm_in_background(self, root: Path) -> threading.Thread:
        """At start-up: parse the repository and build its graph in a thread (workers at
        a lower priority), so the first turn does not pay the cold build. A turn that
        comes sooner waits for it in `symbols` (see `warming`) rather than parse twice."""
        root = Path(root).resolve()
        with self._lock:
            self._warming.add(str(root))
        thread = threading.Thread(
            target=self._warm, args=(root, time.monotonic()), daemon=True, name="acdc-map-warm"
        )
        thread.start()
        return thread

    def _warm(self, root: Path, started: float) -> None:
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
        except Exception:  # the map is an aid: a turn builds it (or goes without) later
            log.exception("warming the repository map of %s failed", root)
        finally:
            with self._lock:
                self._warming.discard(str(root))

    def warming(self, root: Path) -> bool:
        """Whether the start-up build of `root`'s map is still running."""
        with self._lock:
            return str(Path(root).resolve()) in self._warming

    def symbols(self, root: Path, nice: int = 0) -> tuple[dict[str, FileSymbols], int]:
        """Symbols of every file the map may name (path-only files have none), and how
        many were parsed now. One build at a time: a second finds the first one's."""
        symbols, parsed, _ = self._versioned(root, nice)
        return symbols, parsed

    def _versioned(self, root: Path, nice: int) -> tuple[dict[str, FileSymbols], int, int]:
        """`symbols`, and their version number (see `Versions`)."""
        root = Path(root).resolve()
        with self._symbols_lock:
            symbols, parsed = self._symbols_of(root, nice)
            return symbols, parsed, self._versions[str(root)].number

    def _symbols_of(self, root: Path, nice: int) -> tuple[dict[str, FileSymbols], int]:
        self._read_stored(str(root))
        plan = self.heard.plan(root, cached=str(root) in self._looked)
        try:
            if plan.full:
                return self._look_at_all(root, nice)
            return self._look_again(root, plan, nice)
        except BaseException:
            self.heard.distrust(root)  # the dirty paths were taken: look at all next time
            raise
        finally:
            self._save()

    def _read_stored(self, root: str) -> None:
        """The stored stamps and symbols of `root`, into the memory cache, once."""
        if self.store is None or root in self._stored:
            return
        self._stored.add(root)
        stamps, found = self.store.load(root)
        with self._lock:
            self._symbols.update(found)
            self._seen.update({(root, path): _Seen(*known) for path, known in stamps.items()})

    def _save(self) -> None:
        """What the last look learnt (new stamps, new symbols), to the store."""
        with self._lock:
            unsaved, self._unsaved = self._unsaved, []
        if self.store is not None and unsaved:
            self.store.save(unsaved)

    def _look_at_all(self, root: Path, nice: int) -> tuple[dict[str, FileSymbols], int]:
        listing = git.list_files(root).paths
        screened = self._screened(root, listing)
        result: dict[str, FileSymbols] = {}
        paths = [p for p in screened.kept if p not in screened.locked]
        parsed = self._gather(root, result, paths, nice)
        self._keep(root, _Looked(listing, frozenset(listing), screened, result), None)
        return dict(result), parsed

    def _look_again(self, root: Path, plan: Plan, nice: int) -> tuple[dict[str, FileSymbols], int]:
        """Only the paths the watcher named; the listing again when one came or went."""
        last = self._looked[str(root)]
        listing, listed = last.listing, last.listed
        if plan.relist or came_or_went(root, listing, listed, plan.dirty):
            listing = git.list_files(root).paths
            listed = frozenset(listing)
        screened = self._screened(root, listing)
        before = last.symbols
        if screened is last.screened:
            result = dict(before)
            look = [p for p in sorted(plan.dirty) if p in result]
            changed = set(look)
        else:
            result, look = {}, []
            for path in screened.kept:
                if path in screened.locked:
                    continue
                if path in before and path not in plan.dirty:
                    result[path] = before[path]
                else:
                    result[path] = NO_SYMBOLS
                    look.append(path)
            changed = {*look, *(before.keys() - result.keys())}
        parsed = self._gather(root, result, look, nice)
        self._keep(root, _Looked(listing, listed, screened, result), changed)
        return dict(result), parsed

    def _keep(self, root: Path, looked: _Looked, changed: set[str] | None) -> None:
        """The build's look for the next one, and a new version when symbols changed
        (compared only at the `changed` paths when they are known)."""
        last = self._looked.get(str(root))
        old = last.symbols if last else {}
        candidates = old.keys() | looked.symbols.keys() if changed is None else changed
        edited = [p for p in candidates if old.get(p) is not looked.symbols.get(p)]
        self._versions.setdefault(str(root), Versions()).record(edited)
        self._looked[str(root)] = looked
        if last is None or looked.listed is not last.listed:
            self.heard.listed(root, looked.listed)

    def _gather(
        self, root: Path, result: dict[str, FileSymbols], paths: list[str], nice: int
    ) -> int:
        """Each path's symbols into `result` (cached, or parsed now); how many were parsed."""
        pending: dict[str, _Seen] = {}

        def done(path: str, found: FileSymbols) -> None:
            result[path] = self._remember(root, path, pending.pop(path), found)

        parsing = Parsing(self.size_cap, self.workers, done, nice)
        for path in paths:
            looked = self._look(root, path)
            if isinstance(looked, FileSymbols):
                result[path] = looked
            else:
                result[path] = NO_SYMBOLS  # keeps the listing's order while parsing
                pending[path] = looked[1]
                parsing.add(path, looked[0])
        return parsing.finish()

    def _screened(self, root: Path, paths: list[str]) -> boundary.Screened:
        """The boundary's judgement of the listing, judged again only when the listing,
        the secret patterns or the repository's ignore file change."""
        ignore = root / boundary.IGNORE_FILE
        stamp = ignore.stat().st_mtime_ns if ignore.exists() else 0
        key = (tuple(paths), stamp, boundary.secret_patterns())
        with self._lock:
            memo = self._screens.get(str(root))
        if memo is not None and memo[0] == key:
            return memo[1]
        screened = boundary.screen(paths, root=root)
        with self._lock:
            self._screens[str(root)] = (key, screened)
        return screened

    def file_symbols(self, root: Path, path: str) -> tuple[FileSymbols, bool]:
        """One file's symbols (from the cache when its bytes are known) and whether it
        was parsed now. The caller has judged `path` against the boundary."""
        looked = self._look(root, path)
        if isinstance(looked, FileSymbols):
            return looked, False
        raw, seen = looked
        found = self._remember(root, path, seen, parse_bytes(path, raw, self.size_cap))
        self._save()
        return found, True

    def _look(self, root: Path, path: str) -> FileSymbols | tuple[bytes, _Seen]:
        """The file's symbols when they are known (or it has none to find), else its
        bytes to parse, with their stamp and hash."""
        if not language_of(path):
            return NO_SYMBOLS
        full = os.path.join(root, path)  # no Path objects: this runs for every listed file
        try:
            info = os.stat(full)
        except OSError:
            return NO_SYMBOLS
        stamp = (info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        key = (str(root), path)
        with self._lock:
            seen = self._seen.get(key)
            if seen and seen.stamp == stamp and seen.sha256 in self._symbols:
                return self._symbols[seen.sha256]
        if info.st_size > self.size_cap or not _inside(root, full):
            return NO_SYMBOLS
        try:
            with open(full, "rb") as handle:
                raw = handle.read()
        except OSError:
            return NO_SYMBOLS
        sha = hashlib.sha256(raw).hexdigest()
        with self._lock:
            cached = self._symbols.get(sha)
            if cached is not None:  # the same bytes under another name or stamp
                self._seen[key] = _Seen(stamp, sha)
                self._unsaved.append((str(root), path, stamp, sha, None))
                return cached
        return raw, _Seen(stamp, sha)

    def _remember(self, root: Path, path: str, seen: _Seen, found: FileSymbols) -> FileSymbols:
        with self._lock:
            self._symbols[seen.sha256] = found
            self._seen[(str(root), path)] = seen
            self._unsaved.append((str(root), path, seen.stamp, seen.sha256, found))
        return found

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


def _inside(root: Path, full: str) -> bool:
    """No symlink out of the repository (checked when a file is read, not on each look)."""
    real = os.path.realpath(full)
    return real.startswith(str(root) + os.sep)


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


MAPS = RepoMaps()  # one symbol cache per process, shared by every session and tool


def outline(root: Path, path: str, maps: RepoMaps = MAPS) -> str:
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
    if not _inside(root, os.path.join(root, path)):
        raise ValueError(f"{name}: outside the repository")
    found, _ = maps.file_symbols(root, path)
    return render.outline_text(path, found)
