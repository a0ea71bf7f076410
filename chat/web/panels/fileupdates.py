"""The Files panel's live updates as htmx out-of-band fragments on stable ids.

Indexing progress, token counts (whole file and outline) and the watcher's changes reach
every tab of the repository as one HTML message that names only what changed: the count
of each file counted since the last message, the totals of the folders that hold those
files, a file's "edited" mark or git badge, the progress bar: one element per row and cell
kind. Every id is a letter and `row_key(path)` (two 32-bit FNV-1a hashes of the path's
UTF-8 as 11 base64url characters; computed here alone, the page reads ids from the rows), so
no path needs escaping and a folder that is closed in the page costs a few bytes, not a redraw.
Nothing here depends on a session: the fragments go to the repository's group as they
are. Folder totals are figured here from the counts already known (no file is read).
Non-goals: the selection (its answers: `selection`), drawing the rows (`tree`).
"""

from __future__ import annotations

import base64
import functools
import json
import struct
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType

from django.template.loader import render_to_string

from chat.repo.listings import FilesPanel, Listing, folders_of
from chat.repo.repomap.symbols import language_of

_MASK = 0xFFFFFFFF
_PRIME = 0x01000193
_BASES = (0x811C9DC5, 0x050C5D1F)
GIT_NAMES = MappingProxyType({"M": "modified", "S": "staged", "U": "untracked", "D": "deleted"})


@functools.lru_cache(maxsize=200_000)
def row_key(path: str) -> str:
    """The stable id part of `path`'s row: 11 base64url characters."""
    data = path.encode("utf-8")
    out = []
    for h in _BASES:
        for byte in data:
            h = ((h ^ byte) * _PRIME) & _MASK
        out.append(h)
    return base64.urlsafe_b64encode(struct.pack(">II", *out)).rstrip(b"=").decode()


def picker_update(
    panel: FilesPanel,
    repo: Path,
    *,
    paths: list[str] | None = None,
    counts: Mapping[str, int | list] | None = None,
    outline_counts: Mapping[str, int] | None = None,
    progress: tuple[int, int] | list[int] | None = None,
    changed: Iterable[str] = (),
    added: Iterable[str] = (),
    removed: Iterable[str] = (),
    badges: Mapping[str, str] | None = None,
    rows: Iterable[dict] = (),
    redrawn: Iterable[dict] = (),
    shown: set[str] | None = None,
) -> str:
    """One websocket message for the Files panel of every tab on `repo`: fragments for
    the files named and the folders that hold them, nothing for the rest. `paths` is
    the repository's listing when the caller has it (a counting pass). `added` and
    `removed` are the watcher's present and gone files, with their paths: a page that
    has one already (or never had it) changes nothing for it; `rows` are the rows
    (`tree.file_rows`) of the added files new to the listing, which a page puts in their
    open folder (`_placed`: before the next file of the folder, else at its end); a new
    folder or one emptied asks the pages to draw the tree again. `redrawn` are rows drawn
    again whole (a file found refused); `shown` the folders known before the news (read
    here when not given). `badges` are files' git badges now ("" for none:
    a file written by the model's edits). A locked file's count is never sent (its cell
    keeps its "—": acdc reads it only once it is sent)."""
    added, removed = sorted(set(added)), sorted(set(removed))
    shown = panel.listings.known_folders(repo) if shown is None else shown
    listing = panel.listings.of(repo, paths)  # read again when not given: the watcher's news
    counts = {p: c for p, c in (counts or {}).items() if p not in listing.locked}
    outline_counts = dict(outline_counts or {})
    drawn = {row["path"]: row for row in rows}
    touched = {*counts, *outline_counts, *added, *removed}
    folders = sorted({f for p in touched for f in folders_of(p)})
    context = {
        "counts": [(row_key(p), f"{c:,}") for p, c in sorted(counts.items()) if isinstance(c, int)],
        "refused": [_refused(p, c) for p, c in sorted(counts.items()) if not isinstance(c, int)],
        "outline_counts": [(row_key(p), f"{c:,}") for p, c in sorted(outline_counts.items())],
        "changed": [row_key(p) for p in sorted(set(changed))],
        "added": [(row_key(p), p, row, _placed(listing, p, drawn)) for p, row in drawn.items()],
        "removed": [(row_key(p), p) for p in removed],
        "redrawn": list(redrawn),
        "redraw": shown is not None and _new_folders(listing, shown, drawn, removed),
        "files": {"added": json.dumps(added), "removed": json.dumps(removed)},
        "badges": [_badge(p, b) for p, b in sorted((badges or {}).items())],
        "folders": _folder_totals(panel, repo, listing, folders),
        "progress": progress,
        **({"done": f"{progress[0]:,}", "total": f"{progress[1]:,}"} if progress else {}),
    }
    return render_to_string("chat/_picker_update.html", context).strip()


def _placed(listing: Listing, path: str, drawn: Mapping[str, dict]) -> str:
    """Where a new file's row goes (an hx-swap-oob target): before the next file of its
    folder the pages have, else at the end of its folder's group (or of the tree)."""
    folder = path.rpartition("/")[0]
    inside = listing.folders.get(folder, []) if folder else listing.paths
    cut = len(folder) + 1 if folder else 0
    later = [p for p in inside if p > path and "/" not in p[cut:] and p not in drawn]
    if later:
        return f"beforebegin:#r{row_key(min(later))}"
    return f"beforeend:#g{row_key(folder)}" if folder else "beforeend:#file-tree-root"


def _new_folders(
    listing: Listing, shown: set[str], drawn: Mapping[str, dict], removed: list[str]
) -> bool:
    """Whether the pages must draw the tree again: a new file in a folder the listing did
    not hold before (`shown`), or a folder whose last file went."""
    new = any(f not in shown for path in drawn for f in folders_of(path))
    return new or any(f not in listing.folders for p in removed for f in folders_of(p))


def _badge(path: str, badge: str) -> dict:
    return {"key": row_key(path), "badge": badge, "name": GIT_NAMES.get(badge, "")}


def _refused(path: str, count: list | tuple | None) -> dict:
    """What the count cell of a file without a count shows, and why it has none."""
    reason = count[1] if isinstance(count, list | tuple) and len(count) > 1 else ""
    reason = reason or "cannot be read"
    return {"key": row_key(path), "reason": reason, "shown": _refused_label(reason)}


def _refused_label(reason: str) -> str:
    return "binary" if reason.startswith("binary") else "too large"


def badges_update(badges: Mapping[str, str]) -> str:
    """The message with files' git badges alone ("" for none), which draws no row."""
    context = {"badges": [_badge(p, b) for p, b in sorted(badges.items())]}
    return render_to_string("chat/_picker_update.html", context).strip()


def _folder_totals(
    panel: FilesPanel, repo: Path, listing: Listing, folders: list[str]
) -> list[dict]:
    """The folders' tokens (whole files) and outline tokens, with "≥" while some of their
    files are not counted yet (`tree` draws a folder row with the same figures). Each
    file is looked up once, however many of the folders hold it."""
    files = sorted({p for f in folders for p in listing.folders.get(f, [])})
    known = panel.counts.peek(repo, files)
    outlinable = {p for p in files if p not in listing.locked and language_of(p)}
    outline_known = panel.outlines.peek(repo, outlinable)
    return [folder_total(listing, f, known, outlinable, outline_known) for f in folders]


def folder_total(listing: Listing, folder: str, known, outlinable, outline_known) -> dict:
    tokens, counted = 0, True
    outline, outline_counted, outlined = 0, True, False
    for path in listing.folders.get(folder, []):
        count = known.get(path)
        if count is None:
            counted = counted and path in listing.locked
        elif count.tokens is not None:
            tokens += count.tokens
        elif path not in listing.locked:
            continue  # refused: no outline either
        if path in outlinable:
            outlined = True
            found = outline_known.get(path)
            outline_counted = outline_counted and found is not None
            outline += found or 0
    return {
        "key": row_key(folder),
        "shown": f"{'' if counted else '≥ '}{tokens:,}",
        "outline": f"{'' if outline_counted else '≥ '}{outline:,}" if outlined else "",
    }
