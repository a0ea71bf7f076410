"""The answer to a choice in the Files panel: fragments for the rows whose state changed.

A choice (boxes ticked, outlines toggled) is answered to every tab of the session with
one HTML message: an element per file whose selection changed or that sending would shed
(`s` and its row key; `data-sel` off, on or outline), and one per folder holding such a
file with its three states figured here (`data-sel` all, some or none; `data-outline`
when all its outlinable files go as outlines), as picker.js's folder box counts them: a
refused file does not count, a locked one only when it is selected. The carrier names the
choice it answers and the budget. Non-goals: saving the choice (chat.turn.context), the
HUD (its own frame), counts and the watcher's news (fileupdates).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from django.template.loader import render_to_string

from chat.repo import boundary, picker
from chat.repo.repomap.symbols import language_of
from chat.web.panels.fileupdates import folders_of, listing_of, row_key

Chosen = tuple[Iterable[str], Iterable[str]]  # the active files, those sent as outlines


def selection_update(
    repo: Path,
    *,
    before: Chosen,
    after: Chosen,
    shed: Iterable[str] = (),
    budget: int | None = None,
    answers: str = "",
) -> str:
    """The message for the tabs of a session after a choice took it from `before` to
    `after` (each: active paths, outline paths)."""
    was_on, was_outline = set(before[0]), set(before[1])
    on, outline = set(after[0]), set(after[1])
    shed = set(shed) & on
    changed = (was_on ^ on) | (was_outline ^ outline) | shed
    listing = listing_of(repo)
    folders = sorted({f for p in changed for f in folders_of(p)})
    files = sorted({p for f in folders for p in listing.folders.get(f, [])} | changed)
    # Judged now, not as the cached listing saw them: a file may be locked since it was
    # listed (its secret-looking text written after it appeared).
    locked = boundary.screen(files, root=repo).locked
    refused = {p for p, c in picker.COUNTS.peek(repo, files).items() if c.tokens is None}
    refused -= set(locked)
    context = {
        "files": [
            (row_key(p), "outline" if p in outline else "on" if p in on else "off", p in shed)
            for p in sorted(changed)
        ],
        "folders": [
            _folder(f, listing.folders.get(f, []), on, outline, refused, locked) for f in folders
        ],
        "answers": answers,
        "budget": budget or "",
    }
    return render_to_string("chat/_picker_selection.html", context).strip()


def _folder(folder: str, files: list[str], on, outline, refused, locked) -> dict:
    counted = [p for p in files if p not in refused and (p not in locked or p in on)]
    ticked = sum(1 for p in counted if p in on)
    state = "all" if counted and ticked == len(counted) else "some" if ticked else "none"
    outlinable = [p for p in files if p not in refused and p not in locked and language_of(p)]
    as_outline = bool(outlinable) and all(p in outline for p in outlinable)
    return {"key": row_key(folder), "path": folder, "sel": state, "outline": as_outline}
