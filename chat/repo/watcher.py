"""The file tracker (seed 001 §5.8–5.9): a watcher on the repository while a page is open.

One `RepositoryWatcher` per repository, however many tabs watch it (the process's
`WatcherRegistry`, held by the served object, counts them and stops the watcher with the
last one). Changes come from `watchfiles.awatch`
(debounced), minus `.git/`, `.acdc/` and whatever the repository's `.gitignore` files
and `.git/info/exclude` ignore (matched with pathspec), minus every path the repository
boundary calls internal (at any depth, wherever the data folder is) and every secret-shaped
file no person has selected in some session (those are never read). A changed file that some session
has met goes through the indexing protocol (a new version only when its bytes changed; a
deleted file gets a null version; the sets do not change), and `on_change` hears about
every relevant path, so the picker can mark it and the HUD can follow; `on_instructions`
hears when a project instructions file (`instructions.NAMES`) came, went or changed, so
the Context panels follow it without a message sent. Before indexing,
the repository map hears every path of a batch (`RepoMaps.heard`), ignored ones and
`.git/info/exclude` too; it trusts its cache from the first batch (even an empty one, after
a quiet spell: the watch is on) until `run` ends. A crash is logged
and the watcher restarts once; it never takes the server down. The event source can be
injected, so tests feed file events without waiting on the disk. The registry's `close()` at
shutdown stops every watcher within a step (STEP_MS): watchfiles waits for the disk in an
AnyIO worker thread that is not a daemon and ends only with the task that started it, so a
watcher left running would keep the process from exiting.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import watchfiles
from channels.db import database_sync_to_async
from django.db.models import Q

from chat.repo import boundary, git, indexing, instructions
from chat.repo.edits.disk import is_temporary
from chat.repo.own_writes import OwnWrites
from chat.repo.repomap.builder import RepoMaps
from chat.repo.repomap.heard import EXCLUDE_FILE
from history import objects
from history.models import ContentObject, SessionObject

log = logging.getLogger(__name__)
DEBOUNCE_MS = 300
# How often watchfiles' thread looks at the disk's news and the stop event: each look takes
# the GIL, and at 50 ms (its default) the looks cost about a millisecond of CPU a second
# for as long as a page is open, a streamed reply's whole length included.
STEP_MS = 200
RESTART_DELAY = 2.0


@dataclass(frozen=True)
class Change:
    path: str
    outcome: str  # updated | deleted | unchanged | seen (not in any session index)
    object_id: str = ""
    sessions: tuple[str, ...] = ()


OnChange = Callable[[list[Change]], Awaitable[None]]


class RepositoryWatcher:
    def __init__(
        self,
        repo: indexing.Repository,
        on_change: OnChange,
        *,
        maps: RepoMaps,
        own_writes: OwnWrites,
        changes_source: Callable[[], AsyncIterator[set]] | None = None,
        on_instructions: Callable[[], object] | None = None,
    ) -> None:
        self.repo = repo
        self.on_change = on_change
        self.on_instructions = on_instructions
        self.maps = maps
        self.own_writes = own_writes  # acdc's own writes, which record their own version
        self.rules = git.IgnoreRules(repo.root)
        self._source = changes_source or self._awatch
        # Read by watchfiles' thread every step: set, the thread returns and `run` ends.
        self.stopping = threading.Event()

    def _awatch(self) -> AsyncIterator[set]:
        def keep(change: object, path: str) -> bool:
            relative = os.path.relpath(path, self.repo.root).replace(os.sep, "/")
            if relative == EXCLUDE_FILE:  # changes what git lists: the map must hear it
                return True
            return not git.hidden(relative) and not _internal(self.repo, relative)

        # A batch, even an empty one after a quiet spell, says the watch is on.
        return watchfiles.awatch(
            self.repo.root,
            watch_filter=keep,
            debounce=DEBOUNCE_MS,
            step=STEP_MS,
            yield_on_timeout=True,
            recursive=True,
            stop_event=self.stopping,
        )

    async def run(self) -> None:
        """Each batch goes to the repository map first (it trusts its cache only while it
        hears every change), then through indexing. The map trusts nothing once `run` ends."""
        live = False
        try:
            async for batch in self._source():
                if not live:
                    self.maps.heard.watched(self.repo.root)
                    live = True
                heard = self._relatives(batch)
                self.maps.heard.changed(self.repo.root, heard)
                if self.on_instructions and not set(heard).isdisjoint(instructions.NAMES):
                    self.on_instructions()  # ignored or refused ones show too, as such
                paths = self.relevant(path for _, path in batch)
                if not paths:
                    continue
                changes = await database_sync_to_async(self.index)(paths)
                if changes:
                    await self.on_change(changes)
        finally:
            if live:
                self.maps.heard.unwatched(self.repo.root)

    def _relatives(self, batch: Iterable[tuple[object, str]]) -> list[str]:
        """Repository-relative paths as written (a symlink's own name), unfiltered."""
        found = []
        for _, path in batch:
            relative = os.path.relpath(path, self.repo.root).replace(os.sep, "/")
            if relative.startswith("../") or relative == "..":
                try:
                    relative = Path(path).resolve().relative_to(self.repo.root).as_posix()
                except (ValueError, OSError):
                    continue
            if relative != ".":
                found.append(relative)
        return found

    def relevant(self, paths: Iterable[str]) -> list[str]:
        found = set()
        for path in paths:
            try:
                relative = Path(path).resolve().relative_to(self.repo.root).as_posix()
            except (ValueError, OSError):
                continue
            if relative == "." or self.rules.ignored(relative) or is_temporary(relative):
                continue
            if not _internal(self.repo, relative):
                found.add(relative)
        return sorted(found)

    def index(self, paths: list[str]) -> list[Change]:
        """The indexing protocol for files some session has met; the rest are "seen"."""
        changes = []
        for path in paths:
            found = boundary.verdict(path, root=self.repo.root)
            if found.kind == "internal" or (self.repo.root / path).is_dir():
                continue
            try:
                _, source = indexing.locate(self.repo, path, allow_secret=True)
            except indexing.IndexingError:
                continue
            object_id = objects.identity_hash(objects.FILE, source=source)
            links = SessionObject.objects.filter(object_id=object_id)
            if found.kind == "secret":  # read again only for a person who chose it
                links = links.filter(Q(active=True) | Q(pinned=True))
                if not links.exists():
                    continue
            sessions = tuple(links.values_list("session_id", flat=True).distinct())
            if not sessions or not ContentObject.objects.filter(pk=object_id).exists():
                changes.append(Change(path, "seen"))
                continue
            if self.own_writes.is_own(self.repo.root / path):  # acdc's edit records its version
                changes.append(Change(path, "written", object_id, sessions))
                continue
            try:
                result = indexing.index_file(
                    self.repo, path, trigger=indexing.Trigger.WATCHER, allow_secret=True
                )
            except indexing.IndexingError as exc:
                log.info("watcher: %s", exc)
                continue
            outcome = "deleted" if result.deleted else result.outcome.value
            outcome = "updated" if outcome == "created" else outcome
            changes.append(Change(path, outcome, object_id, sessions))
        return changes


def _internal(repo: indexing.Repository, relative: str) -> bool:
    return boundary.verdict(relative, root=repo.root).kind == "internal"


class WatcherRegistry:
    """One watcher task per repository while at least one page watches it; its watchers
    tell `maps` what changed and ask `own_writes` which changes were acdc's."""

    def __init__(self, maps: RepoMaps, own_writes: OwnWrites) -> None:
        self.maps, self.own_writes = maps, own_writes
        # Told when project instructions come, go or change (the panels follow them).
        self.on_instructions: Callable[[], object] | None = None
        self._tasks: dict[str, asyncio.Task] = {}
        self._watchers: dict[str, RepositoryWatcher] = {}
        self._users: dict[str, int] = {}

    async def attach(self, repo: indexing.Repository, on_change: OnChange, **options) -> None:
        key = str(repo.root)
        self._users[key] = self._users.get(key, 0) + 1
        task = self._tasks.get(key)
        if task is None or task.done():
            options.setdefault("on_instructions", self._instructions_changed)
            parts = {"maps": self.maps, "own_writes": self.own_writes}
            watcher = RepositoryWatcher(repo, on_change, **parts, **options)
            self._watchers[key] = watcher
            self._tasks[key] = asyncio.create_task(_supervised(watcher), name=f"watch {key}")

    def _instructions_changed(self) -> None:
        if self.on_instructions is not None:
            self.on_instructions()

    async def detach(self, repo: indexing.Repository) -> None:
        key = str(repo.root)
        self._users[key] = max(0, self._users.get(key, 0) - 1)
        if self._users[key] == 0:
            self._stop(key)

    async def close(self) -> None:
        """Stop every watcher and wait until each has ended (server shutdown)."""
        tasks = [task for task in self._tasks.values() if not task.done()]
        for key in list(self._tasks):
            self._stop(key)
        self._users.clear()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _stop(self, key: str) -> None:
        watcher = self._watchers.pop(key, None)
        if watcher is not None:
            watcher.stopping.set()
        task = self._tasks.pop(key, None)
        if task is not None:
            task.cancel()


async def _supervised(watcher: RepositoryWatcher) -> None:
    for attempt in range(2):
        try:
            await watcher.run()
            return
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("file watcher failed on %s (attempt %d)", watcher.repo.root, attempt + 1)
            await asyncio.sleep(RESTART_DELAY)


@dataclass(frozen=True)
class FileNews:
    """What the watcher saw: files edited outside acdc (`changed`), present and gone,
    and each session's changed files (those it holds)."""

    changed: tuple[str, ...] = ()
    present: tuple[str, ...] = ()
    gone: tuple[str, ...] = ()
    sessions: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, repo: Path, changes: Iterable) -> FileNews:
        """From the watcher's changes: "edited" marks a change the model has not seen,
        acdc's own write it has."""
        changes = list(changes)
        known = [c for c in changes if c.outcome in ("updated", "deleted", "written")]
        here = {c.path: (repo / c.path).is_file() for c in changes}
        held: dict[str, list[str]] = {}
        for change in known:
            for session_id in change.sessions:
                held.setdefault(session_id, []).append(change.path)
        return cls(
            changed=tuple(c.path for c in known if here[c.path] and c.outcome != "written"),
            present=tuple(p for p, there in here.items() if there),
            gone=tuple(p for p, there in here.items() if not there),
            sessions={s: tuple(paths) for s, paths in sorted(held.items())},
        )
