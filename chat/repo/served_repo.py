"""The repository this process serves, one part of the served object (`chat.live.served`).

`ServedRepository` holds what the process knows of it: its path (as the wiring resolves
it; the boundary judges every path against it), the listings the Files panel's pages were
drawn from, and acdc's own writes to it (which the watcher asks). `indexed` hands out the
repository as indexing, the sets and the edits read and write it: with this host's
filesystem id, the configured mounts, the own writes, and for a session the `.acdcignore`
texts its turns started with. Entry points take it from the served object and hand it
down; nothing below them reads `settings.ACDC_REPO`.
Non-goals: the boundary's rules (boundary), the listings themselves (listings).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from django.conf import settings

from chat.repo import indexing
from chat.repo.listings import FileListings
from chat.repo.mcp.client import Connections
from chat.repo.own_writes import OwnWrites
from history import objects
from history.models import Session


@cache
def _filesystem_id() -> str:
    return objects.host_filesystem_id()


@dataclass(frozen=True)
class ServedRepository:
    """The served repository (see the module docstring)."""

    where: Callable[[], Path]  # its path, as the wiring resolves it (the settings' now)
    listings: FileListings
    own_writes: OwnWrites
    mcp: Connections | None = None  # the person's MCP servers, started on first use

    @property
    def root(self) -> Path:
        return Path(self.where())

    @property
    def path(self) -> str:
        """The path as sessions store their repository."""
        return str(self.where())

    def indexed(self, session: Session | None = None) -> indexing.Repository:
        """The repository as indexing reads it; for `session`, with the `.acdcignore`
        texts its turns started with (what counts as secret in it can only grow)."""
        mounts = tuple(
            objects.MountMapping(agent, canonical, _filesystem_id())
            for agent, canonical in getattr(settings, "ACDC_MOUNTS", ())
        )
        floor = tuple(session.secret_floor or ()) if session is not None else ()
        return indexing.Repository(
            self.root, _filesystem_id(), mounts, secret_floor=floor, own_writes=self.own_writes
        )
