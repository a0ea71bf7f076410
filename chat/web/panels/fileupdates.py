"""The Files panel's live updates as htmx out-of-band fragments on stable ids.

Indexing progress, token counts (whole file and outline) and the watcher's changes reach
every tab of the repository as one HTML message that names only what changed: the count
of each file counted since the last message, the totals of the folders that hold those
files, a file's "edited" mark, the progress bar. Every id is `row_key(path)` (two 32-bit
FNV-1a hashes of the path's UTF-8, the same function as picker.js), so no path needs
escaping and a folder that is closed in the page costs a few bytes, not a redraw.
Nothing here depends on a session: the fragments go to the repository's group as they
are. Folder totals are figured here from the counts already known (no file is read).
Non-goals: the selection (its answers are `picker_message`), drawing the tree (picker.js).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from django.template.loader import render_to_string

from chat.repo import boundary, git, outlines, picker
from chat.repo.repomap.symbols import language_of

_MASK = 0xFFFFFFFF
_PRIME = 0x01000193
_BASES = (0x811C9DC5, 0x050C5D1F)


def row_key(path: str) -> str:
    """The stable id part of `path`'s row: 16 hex digits (picker.js `rowKey`)."""
    data = path.encode("utf-8")
    out = []
    for h in _BASES:
        for byte in data:
            h = ((h ^ byte) * _PRIME) & _MASK
        out.append(f"{h:08x}")
    return "".join(out)


@dataclass
class _Listing:
    """The repository's files as the last update saw them, and each folder's files."""

    paths: list[str]
    locked: dict[str, str]
    listed: int  # paths in the listing it was made from
    folders: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, repo: Path, paths: list[str]) -> _Listing:
        screened = boundary.screen(paths, root=repo)
        listing = cls(list(screened.kept), dict(screened.locked), len(paths))
        for path in listing.paths:
            for folder in _folders_of(path):
                listing.folders.setdefault(folder, []).append(path)
        return listing


_LISTINGS: dict[str, _Listing] = {}


def _listing(repo: Path, paths: list[str] | None) -> _Listing:
    """The cached listing of `repo`, made again when `paths` differs from it."""
    known = _LISTINGS.get(str(repo))
    if known is None or (paths is not None and len(paths) != known.listed):
        known = _LISTINGS[str(repo)] = _Listing.of(repo, paths or git.list_files(repo).paths)
    return known


def _folders_of(path: str) -> list[str]:
    parts = path.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def picker_update(
    repo: Path,
    *,
    paths: list[str] | None = None,
    counts: Mapping[str, int | list] | None = None,
    outline_counts: Mapping[str, int] | None = None,
    progress: tuple[int, int] | list[int] | None = None,
    changed: Iterable[str] = (),
    added: Iterable[str] = (),
    removed: Iterable[str] = (),
) -> str:
    """One websocket message for the Files panel of every tab on `repo`: fragments for
    the files named and the folders that hold them, nothing for the rest. `paths` is
    the repository's listing when the caller has it (a counting pass). `added` and
    `removed` are the watcher's present and gone files, with their paths: a page that
    has one already (or never had it) changes nothing for it."""
    counts, outline_counts = dict(counts or {}), dict(outline_counts or {})
    added, removed = sorted(set(added)), sorted(set(removed))
    listing = _listing(repo, paths)
    before = set(listing.paths)
    if any(p not in before for p in added) or any(p in before for p in removed):
        listing = _LISTINGS[str(repo)] = _Listing.of(repo, git.list_files(repo).paths)
    touched = {*counts, *outline_counts, *added, *removed}
    folders = sorted({f for p in touched for f in _folders_of(p)})
    context = {
        "counts": [_file_count(p, c) for p, c in sorted(counts.items())],
        "outline_counts": [(row_key(p), f"{c:,}") for p, c in sorted(outline_counts.items())],
        "changed": [row_key(p) for p in sorted(set(changed))],
        "added": [(row_key(p), p) for p in added],
        "removed": [(row_key(p), p) for p in removed],
        "folders": [_folder_total(repo, listing, f) for f in folders],
        "progress": progress,
        **({"done": f"{progress[0]:,}", "total": f"{progress[1]:,}"} if progress else {}),
    }
    return render_to_string("chat/_picker_update.html", context).strip()


def _file_count(path: str, count: int | list) -> dict:
    """What a file's count cell shows: its tokens, or why it has none."""
    if isinstance(count, int):
        return {"key": row_key(path), "shown": f"{count:,}"}
    reason = count[1] if isinstance(count, list | tuple) and len(count) > 1 else ""
    reason = reason or "cannot be read"
    return {"key": row_key(path), "reason": reason, "shown": _refused_label(reason)}


def _refused_label(reason: str) -> str:
    return "binary" if reason.startswith("binary") else "too large"


def _folder_total(repo: Path, listing: _Listing, folder: str) -> dict:
    """A folder's tokens (whole files) and outline tokens, with "≥" while some of its
    files are not counted yet: picker.js figures them the same way when it draws."""
    files = listing.folders.get(folder, [])
    known = picker.COUNTS.peek(repo, files)
    tokens, counted = 0, True
    outlined = [p for p in files if language_of(p) and p not in listing.locked]
    outline_known = outlines.peek(repo, outlined)
    for path in files:
        count = known.get(path)
        if count is None:
            counted = counted and path in listing.locked
        elif count.tokens is not None:
            tokens += count.tokens
    refused = {p for p, c in known.items() if c.tokens is None and p not in listing.locked}
    outlined = [p for p in outlined if p not in refused]
    outline = sum(outline_known.get(p, 0) for p in outlined)
    outline_counted = all(p in outline_known for p in outlined)
    return {
        "key": row_key(folder),
        "shown": f"{'' if counted else '≥ '}{tokens:,}",
        "outline": f"{'' if outline_counted else '≥ '}{outline:,}" if outlined else "",
    }
