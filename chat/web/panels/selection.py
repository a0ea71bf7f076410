"""The answer to a choice in the Files panel: fragments for the rows whose state changed.

A choice (boxes ticked, outlines toggled) is answered to every tab of the session with
one HTML message: an element per file whose selection changed or that sending would shed
(`s` and its row key; `data-sel` off, on or outline), and one per folder holding such a
file with its three states figured here (`data-sel` all, some or none; `data-outline`
when all its outlinable files go as outlines), as `tree.folder_state` counts them: a
refused file does not count, a locked one only when it is selected. The carrier names the
choice it answers and the budget; the running total follows the rows. News from elsewhere
(the model's tools, the engine shedding files: `sets_update`) is the same message naming
no choice, with the named files' rows drawn again whole. Non-goals: saving the choice
(chat.turn.context), the HUD (its own frame), counts and the watcher's news (fileupdates).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from django.template.loader import render_to_string

from chat.repo import boundary, picker
from chat.web.panels.fileupdates import folders_of, listing_of, row_key
from chat.web.panels.tree import Selection, TreeRows, folder_state, total_of

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
    changed = (was_on ^ on) | (was_outline ^ outline)
    shed = frozenset(shed) & on
    chosen = Selection(frozenset(on), frozenset(outline), shed=shed, budget=budget or 0)
    context = _context(repo, changed, chosen, answers)
    return render_to_string("chat/_picker_selection.html", context).strip()


def sets_update(
    repo: Path, paths: Iterable[str], chosen: Selection, *, flash: bool = True, turn_id: str = ""
) -> str:
    """The message for the tabs of a session after something other than its tabs (the
    model's tools, the engine shedding files) changed `paths` in its selection, which is
    now `chosen`: the same fragments as a choice's answer (naming no choice), and each
    named file's row drawn again whole (pin, shed, git badge; marked to flash when the
    model touched it), the turn's id on the carrier. A named file the listing does not
    hold has no row."""
    paths = set(paths)
    context = _context(repo, paths, chosen, "")
    rows = TreeRows(repo, chosen)
    drawn = rows.found(sorted(paths))
    context["rows"] = [{**row, "hint": "", "flash": flash} for row in drawn]
    context["turn"] = turn_id
    return render_to_string("chat/_picker_selection.html", context).strip()


def _context(repo: Path, changed: set[str], chosen: Selection, answers: str) -> dict:
    """The rows whose state `chosen` names, their folders' three states, the total."""
    on, outline, shed = chosen.active, chosen.outlines, chosen.shed & chosen.active
    changed = changed | shed
    listing = listing_of(repo)
    folders = sorted({f for p in changed for f in folders_of(p)})
    files = sorted({p for f in folders for p in listing.folders.get(f, [])} | changed)
    # Judged now, not as the cached listing saw them: a file may be locked since it was
    # listed (its secret-looking text written after it appeared).
    locked = boundary.screen(files, root=repo).locked
    refused = {p for p, c in picker.COUNTS.peek(repo, files).items() if c.tokens is None}
    refused -= set(locked)
    states = {f: folder_state(listing.folders.get(f, []), chosen, refused, locked) for f in folders}
    return {
        "files": [
            (row_key(p), "outline" if p in outline else "on" if p in on else "off", p in shed)
            for p in sorted(changed)
        ],
        "folders": [
            {"key": row_key(f), "path": f, "sel": s["sel"], "outline": s["as_outline"]}
            for f, s in states.items()
        ],
        "answers": answers,
        "budget": chosen.budget or "",
        "total": total_of(repo, chosen),
    }
