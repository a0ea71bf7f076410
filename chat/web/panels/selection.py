"""A choice in the Files panel, from the select frame to the fragments of the rows it changed.

The server owns the selection: a box sends its choice (`Choice`: a file, a folder, an
outline on or off), `answer_choice` resolves it against the selection the session holds
(read once), saves it and draws the answer. Frames of one socket are taken in order, so
a later choice applies after an earlier one and answers arrive in the order chosen. It is
answered to every tab of the session with
one HTML message: an element per file whose selection changed or that sending would shed
(`s` and its row key; `data-sel` off, on or outline), and one per folder holding such a
file with its three states figured here (`data-sel` all, some or none; `data-outline`
when all its outlinable files go as outlines), as `tree.folder_state` counts them: a
refused file does not count, a locked one only when it is selected. The carrier names the
choice it answers and the budget; the running total follows the rows. News from elsewhere
(the model's tools, the engine shedding files: `sets_update`) is the same message naming
no choice, with the named files' rows drawn again whole. Non-goals: saving the choice
(chat.session.setchanges: `change_selection`), counts and the watcher's news (fileupdates).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from django.template.loader import render_to_string
from django.utils.html import format_html

from chat.repo import boundary
from chat.repo.listings import FilesPanel, folders_of
from chat.repo.repomap.symbols import language_of
from chat.session import Wiring, setchanges
from chat.session.setchanges import Choice
from chat.session.sets import Selection
from chat.web.fragments import render_error, render_hud
from chat.web.panels.fileupdates import row_key
from chat.web.panels.tree import TreeRows, folder_state, total_of

Chosen = tuple[Iterable[str], Iterable[str]]  # the active files, those sent as outlines


@dataclass(frozen=True)
class Answer:
    """What a select frame sends: to the tab that chose (refusals, its note), to every tab
    of the session (the rows' states, then the HUD)."""

    to_tab: list[str]
    to_session: list[str]


def answer_choice(panel: FilesPanel, session_id: str, frame: Choice, wiring: Wiring) -> Answer:
    """A select frame, whole: the choice resolved against the selection the server holds
    (one session read), saved, the engine and HUD following, drawn as the frames to send.
    A frame naming a box (`choose`) changes that box's files; one without names the whole
    selection (the command line's drivers, the benchmarks)."""
    repo = wiring.repository.root
    resolve = choice_of(panel, repo, frame) if frame.choose else _whole(frame)
    change = setchanges.change_selection(session_id, resolve, wiring)
    hud = change.hud
    answer = selection_update(
        panel,
        repo,
        before=change.before,
        after=change.after,
        shed=hud.get("shed", []),
        budget=hud.get("window"),
        answers=frame.selection,
        shed_before=change.shed_before,
        pinned=change.pinned,
    )
    to_tab = [render_error(p) for p in change.problems]
    if frame.choose:
        to_tab.append(render_to_string("chat/_picker_note.html", {"note": change.note}))
    return Answer(to_tab, [answer, render_hud(hud)])


def unanswered(selection: str) -> str:
    """The answer to a choice that could not be saved: its name alone, so the tab that
    chose stops waiting for it (picker.js draws no rows while a choice is unanswered)."""
    return format_html(
        '<div id="picker-update" hx-swap-oob="true" hidden data-selection="{}"></div>', selection
    )


def _whole(frame: Choice) -> setchanges.Resolve:
    wanted = setchanges.Wanted(frame.paths, frozenset(frame.outline), frozenset(frame.confirm))
    return lambda *_: wanted


def choice_of(panel: FilesPanel, repo: Path, frame: Choice) -> setchanges.Resolve:
    """One box's choice as the selection it makes from the one held: a file on (whole) or
    off; a folder's files on or off (refused ones never, locked ones only one by one, after
    the dialog); a file's or a folder's outlinable files as outlines, or out."""
    path = frame.paths[0] if frame.paths else ""
    listing = panel.listings.of(repo)
    under = [path] if frame.choose in ("file", "outline") else listing.folders.get(path, [])
    refused = {p for p, c in panel.counts.peek(repo, under).items() if c.tokens is None}
    locked = set(boundary.screen(under, root=repo).locked)
    refused -= locked
    confirmed = frozenset(frame.confirm) & {path}
    batch = frame.choose == "folder"  # a locked file is added one by one, confirmed

    def resolve(active: list[str], outlines: list[str]) -> setchanges.Wanted:
        on, outline, skipped = dict.fromkeys(active), set(outlines), 0
        for p in under:
            if p in refused:
                continue
            if frame.choose.startswith("outline"):
                if p in locked or not language_of(p):
                    continue
                if frame.on:
                    on[p] = None
                    outline.add(p)
                elif p in outline:
                    on.pop(p, None)
                    outline.discard(p)
            elif batch and frame.on and p in locked and p not in on:
                skipped += 1
            else:
                outline.discard(p)
                on.update({p: None}) if frame.on else on.pop(p, None)
        return setchanges.Wanted(tuple(on), frozenset(outline), confirmed, _skipped(skipped))

    return resolve


def _skipped(count: int) -> str:
    if not count:
        return ""
    them = "it" if count == 1 else "each one"
    were = "locked file was" if count == 1 else "locked files were"
    return f"{count:,} {were} skipped (shaped like a secret): check {them} on its own to send it."


def selection_update(
    panel: FilesPanel,
    repo: Path,
    *,
    before: Chosen,
    after: Chosen,
    shed: Iterable[str] = (),
    budget: int | None = None,
    answers: str = "",
    shed_before: Iterable[str] = (),
    pinned: Iterable[str] = (),
) -> str:
    """The message for the tabs of a session after a choice took it from `before` to
    `after` (each: active paths, outline paths); `shed_before`: the files sending would
    have shed before it, told they no longer would."""
    was_on, was_outline = set(before[0]), set(before[1])
    on, outline = set(after[0]), set(after[1])
    changed = (was_on ^ on) | (was_outline ^ outline) | set(shed_before)
    shed = frozenset(shed) & on
    chosen = Selection(frozenset(on), frozenset(outline), frozenset(pinned), shed, budget or 0)
    context = _context(panel, repo, changed, chosen, answers)
    return render_to_string("chat/_picker_selection.html", context).strip()


def sets_update(
    panel: FilesPanel,
    repo: Path,
    paths: Iterable[str],
    chosen: Selection,
    *,
    flash: bool = True,
    turn_id: str = "",
) -> str:
    """The message for the tabs of a session after something other than its tabs (the
    model's tools, the engine shedding files) changed `paths` in its selection, which is
    now `chosen`: the same fragments as a choice's answer (naming no choice), and each
    named file's row drawn again whole (pin, shed, git badge; marked to flash when the
    model touched it), the turn's id on the carrier. A named file the listing does not
    hold has no row."""
    paths = set(paths)
    context = _context(panel, repo, paths, chosen, "")
    rows = TreeRows(panel, repo, chosen)
    drawn = rows.found(sorted(paths))
    context["rows"] = [{**row, "hint": "", "flash": flash} for row in drawn]
    context["turn"] = turn_id
    return render_to_string("chat/_picker_selection.html", context).strip()


def _context(
    panel: FilesPanel, repo: Path, changed: set[str], chosen: Selection, answers: str
) -> dict:
    """The rows whose state `chosen` names, their folders' three states, the total."""
    on, outline, shed = chosen.active, chosen.outlines, chosen.shed & chosen.active
    changed = changed | shed
    listing = panel.listings.of(repo)
    folders = sorted({f for p in changed for f in folders_of(p)})
    files = sorted({p for f in folders for p in listing.folders.get(f, [])} | changed)
    # Judged now, not as the cached listing saw them: a file may be locked since it was
    # listed (its secret-looking text written after it appeared).
    locked = boundary.screen(files, root=repo).locked
    refused = {p for p, c in panel.counts.peek(repo, files).items() if c.tokens is None}
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
        "total": total_of(panel, repo, chosen),
    }
