"""A session's object sets (seed 001 §3.1–3.6): index, metadata pool, active set, pinned set.

One state, two hands: the person's file picker and the model's tools both call these
functions, so a file checked in the browser and a file the model activates are the same
row. The index only grows (a SessionObject row is never deleted); the pool only grows
(§3.2: nothing demotes from it yet); the active set is a subset of the pool; pins are
independent of activity. Activating a stub or an unknown path reads it first (full
indexing), so the active set never holds content that was not read. Resume (§3.6)
reconciles every sourced object of the session against the disk. The repository boundary
holds here too: internal paths never enter and are never re-read; a secret-shaped file
enters only with `allow_secret` (the person confirmed it), and a secret in the session's
active or pinned set is the person's confirmed choice (the model's tools cannot put one
there), so resume and the watcher re-read exactly those.

The room's parts: reading the sets (`entries`), what a reference names (`resolving`),
changing them (`changes`) and resume (`resume`); callers use the names gathered here.
Non-goals: rendering (contextcore), watching the disk (chat.repo.watcher), the Files panel.
"""

from __future__ import annotations

from chat.repo.sessionsets.changes import (
    activate,
    deactivate,
    pin,
    set_active_files,
    unpin,
)
from chat.repo.sessionsets.entries import (
    Entry,
    SetsError,
    active_paths,
    display_path,
    entries,
    file_choice,
    outline_paths,
    pinned_paths,
)
from chat.repo.sessionsets.resolving import (
    confirmed_secret,
    file_guard,
    hold_secret_floor,
    person_selected,
    resolve,
)
from chat.repo.sessionsets.resume import resume

__all__ = (
    "Entry",
    "SetsError",
    "activate",
    "active_paths",
    "file_choice",
    "confirmed_secret",
    "hold_secret_floor",
    "deactivate",
    "display_path",
    "entries",
    "file_guard",
    "outline_paths",
    "person_selected",
    "pin",
    "pinned_paths",
    "resolve",
    "resume",
    "set_active_files",
    "unpin",
)
