"""The Files panel's data: the repository tree, git badges, and token counts by content.

The tree is `git ls-files -co --exclude-standard` (tracked plus untracked-not-ignored,
never `.git/` or `.acdc/`); the page keeps it as a flat list of paths (`tree_payload`) for
its filter and folder boxes, while the rows are drawn on the server, folder by folder. Token
counts come from `TokenCounts`: per process, files whose (size, mtime) did not change are
not even re-read; otherwise the bytes are hashed and looked up in the `TokenCount` table;
only new contents are encoded, in batches over two threads (tiktoken's
`encode_ordinary_batch`). Cold counting runs in one background pass per repository
(chat.repo.passes) and reports progress; binary and oversized files come back with the
reason instead of a count. The repository boundary judges the listing: internal paths are
left out entirely, secret-shaped files are listed under `locked` with the reason
(picker.js asks before one is selected), and neither is ever read to be counted.
Non-goals: selection state (chat.repo.sessionsets), rendering (chat.web.panels.tree draws
the rows, fileupdates their live updates, selection a choice's answer).
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from django.db import OperationalError

from chat.models import TokenCount
from chat.repo import boundary, git
from chat.repo.passes import Passes
from contextcore.files import DEFAULT_SIZE_CAP, check_text
from contextcore.tokens import TokenCounter
from history import dbfaults

BATCH_FILES = 4096
BATCH_BYTES = 8_000_000
PROGRESS_SECONDS = 0.25
ENCODING = "cl100k_base"
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Count:
    tokens: int | None
    reason: str = ""  # why there is no count: binary, too large, unreadable

    def as_json(self) -> int | list:
        return self.tokens if self.tokens is not None else [None, self.reason]


@dataclass(frozen=True)
class _Seen:
    stamp: tuple[int, int]
    count: Count


class TokenCounts:
    """The process's token counts of a repository's files (see the module docstring), one
    for the process (the served object holds it); its passes run on `passes`, and new
    contents are encoded with `counter` (whose own cache is not used: the counts live in
    the TokenCount table, by content hash, and holding every file's text in memory for a
    second cache would cost more than it saves)."""

    def __init__(
        self, passes: Passes, counter: TokenCounter, size_cap: int = DEFAULT_SIZE_CAP
    ) -> None:
        self.passes, self.counter, self.size_cap = passes, counter, size_cap
        self._seen: dict[tuple[str, str], _Seen] = {}
        self._lock = threading.Lock()

    def known(self, repo: Path, paths: Iterable[str]) -> dict[str, Count]:
        """Counts available without reading any file (stat only)."""
        found = {}
        root = str(repo)
        for path in paths:
            seen = self._seen.get((root, path))
            if seen is None:
                continue
            try:
                info = os.stat(repo / path)
            except OSError:
                continue
            if (info.st_size, info.st_mtime_ns) == seen.stamp:
                found[path] = seen.count
        return found

    def peek(self, repo: Path, paths: Iterable[str]) -> dict[str, Count]:
        """The counts last found for `paths`, without even a stat (a folder's total in a
        progress update: the next update corrects one that went stale meanwhile)."""
        root = str(repo)
        seen = ((path, self._seen.get((root, path))) for path in paths)
        return {path: found.count for path, found in seen if found is not None}

    def count(
        self,
        repo: Path,
        paths: list[str],
        progress: Callable[[int, int, dict[str, Count]], None] | None = None,
    ) -> dict[str, Count]:
        """Counts for every path, reading and encoding only what is new. `progress` gets
        (done, total, counts found since the last call) now and then."""
        result = self.known(repo, paths)
        todo = [p for p in paths if p not in result]
        done, total, last = len(result), len(paths), 0.0
        fresh: dict[str, Count] = {}
        table = _Table()
        for batch in _batches(repo, todo, self.size_cap):
            self._count_batch(repo, batch, table)
            for path, _, _ in batch:
                seen = self._seen[(str(repo), path)].count
                result[path] = fresh[path] = seen
            done += len(batch)
            if progress and (time.monotonic() - last >= PROGRESS_SECONDS or done == total):
                progress(done, total, fresh)
                fresh, last = {}, time.monotonic()
        if progress and fresh:
            progress(done, total, fresh)
        return result

    def _count_batch(self, repo: Path, batch: list, table: _Table) -> None:
        """Remember a count for every file of `batch`: the table's for a content it holds,
        else encoded now (and kept in the table)."""
        hashes = {
            path: hashlib.sha256(raw).hexdigest() for path, raw, _ in batch if raw is not None
        }
        stored = table.tokens(set(hashes.values()))
        to_encode = []
        for path, raw, stamp in batch:
            if raw is None:
                self._remember(repo, path, stamp, Count(None, stamp[2]))
                continue
            text, reason = check_text(raw, self.size_cap)
            if text is None:
                self._remember(repo, path, stamp, Count(None, reason))
            elif hashes[path] in stored:
                self._remember(repo, path, stamp, Count(stored[hashes[path]]))
            else:
                to_encode.append((path, text, stamp))
        counted = self.counter.count_many([t for _, t, _ in to_encode], remember=False)
        new_rows = {}
        for (path, _, stamp), tokens in zip(to_encode, counted, strict=True):
            self._remember(repo, path, stamp, Count(tokens))
            new_rows[hashes[path]] = tokens
        table.keep(new_rows)

    def _remember(self, repo: Path, path: str, stamp: tuple, count: Count) -> None:
        with self._lock:
            self._seen[(str(repo), path)] = _Seen((stamp[0], stamp[1]), count)

    def count_in_background(
        self, repo: Path, paths: list[str], progress: Callable[[int, int, dict], None]
    ) -> bool:
        """Count `paths` in a background pass unless one already runs for `repo`;
        returns whether a new one started (chat.repo.passes)."""
        return self.passes.start("count", repo, lambda: self.count(repo, paths, progress))


class _Table:
    """The TokenCount table as one counting pass uses it. A lock another program holds on
    the database stops the table, not the count: the pass says so once (one line, no
    traceback) and counts the rest without it; the next pass keeps what it finds."""

    def __init__(self) -> None:
        self.locked = False

    def tokens(self, hashes: set[str]) -> dict[str, int]:
        if self.locked or not hashes:
            return {}
        rows = TokenCount.objects.filter(sha256__in=hashes, encoding=ENCODING)
        return self._guarded(lambda: dict(rows.values_list("sha256", "tokens")), {})

    def keep(self, tokens: dict[str, int]) -> None:
        if self.locked or not tokens:
            return
        rows = [TokenCount(sha256=h, encoding=ENCODING, tokens=t) for h, t in tokens.items()]
        self._guarded(lambda: TokenCount.objects.bulk_create(rows, ignore_conflicts=True), None)

    def _guarded(self, work: Callable[[], object], instead: object):
        try:
            return work()
        except OperationalError as exc:
            if not dbfaults.is_locked(exc):
                raise
        self.locked = True
        path = dbfaults.sqlite_path()
        holder = dbfaults.locked_by(path) if path else "locked"
        log.warning(
            "token counts are not kept: the database is %s; this pass counts without it "
            "and the next one keeps them",
            holder,
        )
        return instead


def _batches(repo: Path, paths: list[str], size_cap: int):
    """(path, bytes or None, (size, mtime_ns, reason)) in batches of a few MB."""
    batch: list = []
    size = 0
    screened = boundary.screen(paths, root=repo)
    kept = set(screened.kept)
    for path in paths:
        full = repo / path
        try:
            info = os.stat(full)
        except OSError:
            batch.append((path, None, (0, 0, "cannot be read")))
            continue
        stamp = (info.st_size, info.st_mtime_ns)
        if path not in kept or path in screened.locked or not _inside(repo, path, full):
            reason = screened.locked.get(path) or "not a file acdc reads"
            batch.append((path, None, (*stamp, reason)))
        elif not os.path.isfile(full):
            batch.append((path, None, (*stamp, "not a regular file")))
        elif info.st_size > size_cap:
            reason = f"too large ({info.st_size:,} bytes; the limit is {size_cap:,})"
            batch.append((path, None, (*stamp, reason)))
        else:
            try:
                raw = full.read_bytes()
            except OSError as exc:
                batch.append((path, None, (*stamp, f"cannot be read ({exc.strerror})")))
            else:
                batch.append((path, raw, (*stamp, "")))
                size += len(raw)
        if len(batch) >= BATCH_FILES or size >= BATCH_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _inside(repo: Path, path: str, full: Path) -> bool:
    """A listed path that stays in the repository (a symlink is resolved, once)."""
    if os.path.isabs(path) or ".." in path.split("/"):
        return False
    return not full.is_symlink() or full.resolve().is_relative_to(repo.resolve())


def tree_payload(
    repo: Path, counts: TokenCounts, active: Iterable[str], outlines: Iterable[str] = ()
) -> dict:
    """What picker.js keeps beside the rows the server draws (chat.web.panels.tree): the
    flat list of paths (the filter ranks it, a folder's box takes its files from it), the
    locked files with the reason, the files known not to be readable, and the selection
    (which of it goes as outlines)."""
    screened = boundary.screen(git.list_files(repo).paths, root=repo)
    paths = screened.kept
    known = counts.peek(repo, paths)
    return {
        "files": paths,
        "locked": screened.locked,
        "refused": sorted(
            p for p, c in known.items() if c.tokens is None and p not in screened.locked
        ),
        "active": sorted(set(active)),
        "outlines": sorted(set(outlines)),
    }
