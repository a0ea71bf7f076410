"""What the repository map has heard of a repository's files since it last looked at all.

A build trusts its cache (git's listing, each file's stamp and symbols) only while a file
watcher is live on the repository and was live before the full look that filled the cache:
then it looks again only at the paths the watcher named (`dirty`), and lists the repository
again only when a path came or went or an ignore file changed (`stale`). Without a watcher,
once one ended or crashed, and until the first full look with one, a build looks at every
file (`Plan.full`). `Versions` numbers each build's symbols and keeps which paths each
number changed, so the graph, the ranking and the map's memo work per changed path.
Thread-safe: events come from the event loop, builds run in threads. Known gaps, closed by
a later build: an edit whose event comes after a build started shows in the next one; a
file both tracked and ignored that joins or leaves git's index with nothing changing on
disk (`git rm --cached`, `git add -f`) waits for the next full look, since index writes
(any `git status` makes them) are not taken as changes of the listing. Non-goals: reading
files (builder), watching the disk (chat.repo.watcher).
"""

from __future__ import annotations

import os
import threading
from bisect import bisect_left
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from chat.repo import boundary, git

EXCLUDE_FILE = ".git/info/exclude"


@dataclass(frozen=True)
class Plan:
    """What the next build looks at: everything, or the `dirty` paths (and the listing
    again when `relist`, or when a dirty path came or went)."""

    full: bool
    dirty: frozenset[str] = frozenset()
    relist: bool = False


@dataclass
class _Repository:
    rules: git.IgnoreRules
    live: int = 0  # event sources delivering this repository's changes now
    trusted: bool = False  # every change since the last full look was heard
    stale: bool = False  # the listing must be read again
    dirty: set[str] = field(default_factory=set)
    listed: frozenset[str] = frozenset()  # git's listing as the last build read it


def controls_listing(path: str) -> bool:
    """Files whose change changes which paths git lists or the boundary keeps."""
    return (
        path.rpartition("/")[2] == ".gitignore"
        or path == EXCLUDE_FILE
        or path == boundary.IGNORE_FILE
    )


class Heard:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._repositories: dict[str, _Repository] = {}

    def _get(self, root: Path) -> _Repository:
        """The caller holds the lock."""
        key = str(root)
        found = self._repositories.get(key)
        if found is None:
            found = self._repositories[key] = _Repository(git.IgnoreRules(Path(key)))
        return found

    def watched(self, root: Path) -> None:
        """A watcher's event source is live on `root`: from now on it hears every change.
        Trust starts with the next full look, not here."""
        with self._lock:
            self._get(root).live += 1

    def unwatched(self, root: Path) -> None:
        """A watcher on `root` ended (detached, crashed): changes may go unheard now."""
        with self._lock:
            found = self._get(root)
            found.live = max(0, found.live - 1)
            found.trusted = False

    def changed(self, root: Path, paths: Iterable[str]) -> None:
        """The watcher heard these repository-relative paths change (any kind of change)."""
        with self._lock:
            found = self._get(root)
            if not found.live:
                return
            listed, rules, stale = found.listed, found.rules, found.stale
        dirty = set()
        for path in paths:
            if controls_listing(path):
                stale = True
            elif path in listed:
                dirty.add(path)
            elif stale or git.hidden(path) or rules.ignored(path) or _internal(root, path):
                continue  # not in git's listing, or listed again anyway
            else:
                dirty.add(path)  # a new path, or a folder that came or went
        with self._lock:
            found.dirty |= dirty
            found.stale = found.stale or stale

    def plan(self, root: Path, cached: bool) -> Plan:
        """For a build of `root` (one at a time), which has a cache from an earlier build
        when `cached`. Takes the dirty paths: what is heard from now on is for the next."""
        with self._lock:
            found = self._get(root)
            if cached and found.trusted:
                plan = Plan(False, frozenset(found.dirty), found.stale)
            else:
                plan = Plan(True)
                found.trusted = found.live > 0
            found.dirty, found.stale = set(), False
            return plan

    def listed(self, root: Path, listed: frozenset[str]) -> None:
        """The listing the build read (a path not in it is new when heard)."""
        with self._lock:
            self._get(root).listed = listed

    def distrust(self, root: Path) -> None:
        """A build failed after taking the dirty paths: the next one looks at everything."""
        with self._lock:
            self._get(root).trusted = False


def came_or_went(
    root: Path, listing: list[str], listed: frozenset[str], dirty: Iterable[str]
) -> bool:
    """Whether git's listing (sorted; `listed`, the same as a set) may differ for these
    heard paths: a listed file is gone, a path it did not list is there, or a folder of
    listed files is gone. A path that came and went between two builds (an editor's
    temporary file) changes nothing."""
    for path in dirty:
        there = os.path.lexists(os.path.join(root, path))
        if path in listed:
            if not there:
                return True
        elif there:
            return True
        else:
            at = bisect_left(listing, path + "/")
            if at < len(listing) and listing[at].startswith(path + "/"):
                return True
    return False


def _internal(root: Path, path: str) -> bool:
    return boundary.verdict(path, root=root).kind == "internal"


class Versions:
    """Numbers for the successive symbols of one repository, and which paths (came, went or
    got other symbols) each number changed."""

    KEPT = 64  # numbers remembered: further back, `between` does not know

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.number = 0
        self._log: deque[tuple[int, frozenset[str]]] = deque(maxlen=self.KEPT)

    def record(self, paths: Iterable[str]) -> int:
        """A new number when `paths` is not empty; the current number."""
        paths = frozenset(paths)
        with self._lock:
            if paths:
                self.number += 1
                self._log.append((self.number, paths))
            return self.number

    def between(self, first: int, second: int) -> frozenset[str] | None:
        """Every path whose symbols may differ between two numbers (either way round);
        None when that is no longer known."""
        low, high = sorted((first, second))
        with self._lock:
            if low == high:
                return frozenset()
            if low < 0 or not self._log or self._log[0][0] > low + 1:
                return None
            return frozenset().union(*(paths for at, paths in self._log if low < at <= high))
