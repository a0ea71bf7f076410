"""The symbols of one repository's files, kept current cheaply: the map's raw material.

`SymbolCache.symbols` lists the repository once (git's listing, the boundary's screen:
internal and secret-shaped files are never read and never named), parses each source file
whose (size, mtime, ctime) changed since the last look, and keeps its symbols by the sha256
of its bytes (the picker's token counts use the same hash), in memory and on disk (`store`:
a restart parses only what changed), so an unchanged file is never parsed twice. While a
file watcher runs (`heard`), a look covers only the files it heard change and keeps the
listing unless a path came or went; without one, every look lists and stats every file.
Each change of symbols is a new version (`Versions`), so the graph is updated, not rebuilt.
Non-goals: ranking and rendering the map (`builder`).
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from chat.repo import boundary, git
from chat.repo.repomap.heard import Heard, Plan, Versions, came_or_went
from chat.repo.repomap.parallel import Parsing, default_workers, parse_bytes
from chat.repo.repomap.store import Row, SymbolStore
from chat.repo.repomap.symbols import NO_SYMBOLS, FileSymbols, language_of
from contextcore.files import DEFAULT_SIZE_CAP

PROGRESS_EVERY = 1000  # files between two notes of how far a look has got


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


class SymbolCache:
    """Process-wide symbols of every repository looked at; thread-safe."""

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
        self._versions: dict[str, Versions] = {}
        self._screens: dict[str, tuple] = {}  # root -> (listing key, boundary.Screened)
        self._looked: dict[str, _Looked] = {}  # root -> what the last build looked at
        self.heard = Heard()  # what the file watcher told of each repository since
        self._progress: dict[str, tuple[int, int]] = {}  # root -> (files looked at, of)

    def symbols(self, root: Path, nice: int = 0) -> tuple[dict[str, FileSymbols], int]:
        """Symbols of every file the map may name (path-only files have none), and how
        many were parsed now. One build at a time: a second finds the first one's."""
        symbols, parsed, _ = self._versioned(root, nice)
        return symbols, parsed

    def progress(self, root: Path) -> tuple[int, int] | None:
        """(files looked at, files to look at) of the look under way at `root`, or None
        before the first: how far a long first build has got, for the page to say."""
        with self._lock:
            return self._progress.get(str(Path(root).resolve()))

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
        total = len(paths)

        def done(path: str, found: FileSymbols) -> None:
            result[path] = self._remember(root, path, pending.pop(path), found)

        parsing = Parsing(self.size_cap, self.workers, done, nice)
        for number, path in enumerate(paths):
            if number % PROGRESS_EVERY == 0:
                self._progressed(root, number - len(pending), total)
            looked = self._look(root, path)
            if isinstance(looked, FileSymbols):
                result[path] = looked
            else:
                result[path] = NO_SYMBOLS  # keeps the listing's order while parsing
                pending[path] = looked[1]
                parsing.add(path, looked[0])
        parsed = parsing.finish()
        self._progressed(root, total, total)
        return parsed

    def _progressed(self, root: Path, done: int, total: int) -> None:
        with self._lock:
            self._progress[str(root)] = (max(0, done), total)

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
        if info.st_size > self.size_cap or not inside(root, full):
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


def inside(root: Path, full: str) -> bool:
    """No symlink out of the repository (checked when a file is read, not on each look)."""
    real = os.path.realpath(full)
    return real.startswith(str(root) + os.sep)
