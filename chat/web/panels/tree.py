"""The Files panel's rows, drawn on the server: a folder's children, the tree as the page
first shows it, the filter's list, and the running total of the selection.

A row carries everything it shows: the file's selection (off, on, outline), its count and
its outline's count, git badge, pin, lock, and whether sending would shed it; a folder row
its three states (all, some, none, figured as `selection.folder_state` does for a choice's
answer) and its totals (as `fileupdates` sends them while counting). Every cell has the id
the live fragments aim at (`row_key`), so a row drawn here takes later updates in place.
A closed folder's children are not drawn: opening it asks for them (an htmx GET).
Non-goals: ranking the filter's matches (filter.js), the answer to a choice (selection),
counting (chat.repo.picker).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from django.template.loader import render_to_string
from django.urls import reverse

from chat.llm.runtime import Runtime, chat_model
from chat.repo import git, indexing, sessionsets
from chat.repo.listings import FilesPanel, TreeAsk, folders_of
from chat.repo.repomap.symbols import language_of
from chat.session import Wiring
from chat.session.hud import request_facts
from chat.session.sets import Selection
from chat.web.panels.fileupdates import GIT_NAMES, folder_total, row_key
from history.models import Session

# A tree this small opens whole (express's 212 files, all open, were 304 KB of rows and
# too long to scan); a larger one opens only the folders holding selected or changed files.
OPEN_ALL_FILES, OPEN_ALL_FOLDERS = 150, 30
OPEN_CHANGED_UP_TO = 100  # more changed files than this (a fresh clone's build) open none


class TreeRows:
    """The rows of one repository for one session's selection (one listing, one git
    status, the counts known now)."""

    def __init__(self, panel: FilesPanel, repo: Path, selection: Selection) -> None:
        self.panel = panel
        self.repo = repo
        self.selection = selection
        self.listing = panel.listings.of(repo)
        self.badges = git.status(repo)

    def children(self, folder: str) -> tuple[list[str], list[str]]:
        """The folders and files directly inside `folder` ("" is the top), sorted."""
        inside = self.listing.folders.get(folder, []) if folder else self.listing.paths
        cut = len(folder) + 1 if folder else 0
        dirs, files = set(), []
        for path in inside:
            rest = path[cut:]
            if "/" in rest:
                dirs.add(folder + "/" + rest.split("/", 1)[0] if folder else rest.split("/", 1)[0])
            else:
                files.append(path)
        return sorted(dirs, key=lambda d: d.rsplit("/", 1)[-1].casefold()), sorted(files)

    def opened(self) -> set[str]:
        """The folders the page opens at first: all of a small repository, else those that
        hold a selected file or one git reports changed (so both are in view)."""
        folders = self.listing.folders
        if len(self.listing.paths) <= OPEN_ALL_FILES and len(folders) <= OPEN_ALL_FOLDERS:
            return set(folders)
        changed = list(self.badges) if len(self.badges) <= OPEN_CHANGED_UP_TO else []
        held = {f for p in [*self.selection.active, *changed] for f in folders_of(p)}
        return held & folders.keys()

    def rows(self, folder: str, opened: set[str]) -> list[dict]:
        """`folder`'s children as rows, an open folder's own children inside its row."""
        dirs, files = self.children(folder)
        known = self._known(files)
        totals = self._totals(dirs)
        rows = []
        for sub in dirs:
            row = self._folder_row(sub, totals[sub])
            if sub in opened:
                row.update(open=True, children=self.rows(sub, opened))
            rows.append(row)
        rows.extend(self._file_row(p, *known) for p in files)
        return rows

    def found(self, paths: Iterable[str]) -> list[dict]:
        """The filter's list: the files named (best first), each with its folder."""
        listed = set(self.listing.paths)
        paths = [p for p in paths if p in listed]
        known = self._known(paths)
        return [{**self._file_row(p, *known), "hint": _folder_of(p)} for p in paths]

    def total(self) -> dict:
        """The running total under the filter box, and the files sending would shed."""
        return total_of(self.panel, self.repo, self.selection)

    def _known(self, files: list[str]) -> tuple[dict, dict]:
        return self.panel.counts.peek(self.repo, files), self.panel.outlines.peek(self.repo, files)

    def _totals(self, dirs: list[str]) -> dict[str, dict]:
        files = sorted({p for d in dirs for p in self.listing.folders.get(d, [])})
        known = self.panel.counts.peek(self.repo, files)
        outlinable = {p for p in files if p not in self.listing.locked and language_of(p)}
        outline_known = self.panel.outlines.peek(self.repo, outlinable)
        refused = {p for p, c in known.items() if c.tokens is None} - set(self.listing.locked)
        sel = self.selection
        return {
            d: {
                **folder_total(self.listing, d, known, outlinable, outline_known),
                **folder_state(self.listing.folders.get(d, []), sel, refused, self.listing.locked),
            }
            for d in dirs
        }

    def _folder_row(self, folder: str, total: dict) -> dict:
        name = folder.rsplit("/", 1)[-1]
        row = {"folder": True, "path": folder, "name": name, "open": False, **total}
        return {**row, "parts": _breakable(name)}

    def _file_row(self, path: str, counts: dict, outline_counts: dict) -> dict:
        sel, locked = self.selection, self.listing.locked.get(path, "")
        count = counts.get(path)
        reason = count.reason if count is not None and count.tokens is None and not locked else ""
        on = path in sel.active
        badge = self.badges.get(path, "")
        outline = outline_counts.get(path)
        return {
            "path": path,
            "key": row_key(path),
            "parts": _breakable(path.rsplit("/", 1)[-1]),
            "on": on,
            "as_outline": on and path in sel.outlines,
            "pinned": path in sel.pinned,
            "shed": on and path in sel.shed,
            "suggested": not on and path in sel.suggested,
            "locked": locked,
            "refused": reason,
            "refused_label": "binary" if reason.startswith("binary") else "too large",
            "tokens": f"{count.tokens:,}" if count is not None and count.tokens is not None else "",
            "grammar": bool(language_of(path)),
            "outline": f"{outline:,}" if outline is not None else "…",
            "badge": badge,
            "badge_name": GIT_NAMES.get(badge, ""),
            "pin_shown": not reason and (not locked or on or path in sel.pinned),
        }


def held_selection(session: Session, runtime: Runtime, repo: indexing.Repository) -> Selection:
    """The session's files as the Files panel shows them, with the files sending would
    shed and the budget as the last assembly made them."""
    active, chosen_outlines, pinned = sessionsets.file_choice(session, repo)
    saved = (session.context_state or {}).get("hud") or {}
    return Selection(
        active=frozenset(active),
        outlines=frozenset(chosen_outlines),
        pinned=frozenset(pinned),
        shed=frozenset(saved.get("shed", [])),
        budget=saved.get("window")
        or request_facts(chat_model(session.model), runtime)[0].input_budget,
        suggested=suggested_paths(saved),
    )


def suggested_paths(hud: dict) -> frozenset[str]:
    """The files of the regions the HUD's figures say were suggested for the message."""
    found = hud.get("suggested") or {}
    return frozenset(str(r.get("path", "")) for r in found.get("regions", ()))


def sets_named(session: Session, hud: dict, repo: indexing.Repository) -> str:
    """The name of the sets `session` holds now, with the files `hud` says sending would
    shed: what the follower's news names (chat.live.follower), so a tab that was told it
    keeps its rows when that news comes."""
    active, chosen_outlines, pinned = sessionsets.file_choice(session, repo)
    shed = frozenset(hud.get("shed", []))
    chosen = (frozenset(active), frozenset(chosen_outlines), frozenset(pinned), shed)
    return Selection(*chosen, suggested=suggested_paths(hud)).digest()


def file_rows(panel: FilesPanel, repo: Path, paths: Iterable[str]) -> list[dict]:
    """The rows of files new to the repository (none selected: a page shows its own)."""
    rows = TreeRows(panel, repo, Selection(frozenset()))
    return [{**row, "hint": ""} for row in rows.found(paths)]


def folder_state(files: Iterable[str], sel: Selection, refused: set[str], locked) -> dict:
    """A folder's box: all, some or none of the files it would take (a refused file does
    not count, a locked one only when it is selected); ≡ on when all outlinable files go
    as outlines. A choice's answer figures it the same way (selection)."""
    counted = [p for p in files if p not in refused and (p not in locked or p in sel.active)]
    ticked = sum(1 for p in counted if p in sel.active)
    state = "all" if counted and ticked == len(counted) else "some" if ticked else "none"
    outlinable = [p for p in files if p not in refused and p not in locked and language_of(p)]
    as_outline = bool(outlinable) and all(p in sel.outlines for p in outlinable)
    return {"sel": state, "as_outline": as_outline}


def _folder_of(path: str) -> list[str]:
    """The folder a found file's row names under it, in parts (none at the top)."""
    return _breakable(path.rpartition("/")[0] + "/") if "/" in path else []


def _breakable(name: str) -> list[str]:
    """A long name or path wraps after "/", "_", "-" or "." (a <wbr> between parts), not
    inside a word: the CSS breaks a word only when one part is wider than the panel."""
    parts, start = [], 0
    for i, char in enumerate(name):
        if char in "/_.-" and i + 1 < len(name):
            parts.append(name[start : i + 1])
            start = i + 1
    parts.append(name[start:])
    return parts


def total_of(panel: FilesPanel, repo: Path, sel: Selection) -> dict:
    """ "N selected · T of B tokens (P%)", "≥" while some selected file is not counted;
    over when sending would shed files or the total passes the budget."""
    whole = panel.counts.peek(repo, sel.active)
    outline = panel.outlines.peek(repo, sel.outlines & sel.active)
    tokens, unknown = 0, False
    for path in sel.active:
        count = (
            outline.get(path) if path in sel.outlines else getattr(whole.get(path), "tokens", None)
        )
        unknown = unknown or count is None
        tokens += count or 0
    shed = sorted(sel.shed & sel.active)
    outlined = len(sel.outlines & sel.active)
    share = round(100 * tokens / sel.budget) if sel.budget else 0
    return {
        "selected": len(sel.active),
        "outlined": f"{outlined:,}" if outlined else "",
        "tokens": f"{'≥ ' if unknown else ''}{tokens:,}",
        "budget": f"{sel.budget:,}",
        "share": share,
        "over": bool(shed) or (sel.budget > 0 and tokens > sel.budget),
        "shed": shed,
        "shed_count": len(shed),
        "sets": sel.digest(),
    }


def render_tree(
    rows: TreeRows,
    url: str,
    *,
    folder: str | None = None,
    found=None,
    opened=None,
    matched=0,
    coming=False,
) -> str:
    """The rows to swap in: `folder`'s children; the filter's list (`found`, best first, of
    `matched` files the filter found: the rest are named in a note; `coming` when the page
    has not yet the list of paths it ranks, so that none found says so, not "no match");
    or the whole tree as the page shows it (`opened`: the open folders, or the first
    view's), with the total. `url` is where a closed folder asks for its children."""
    if folder is not None:
        context = {"rows": rows.rows(folder, set()), "rows_url": url}
    else:
        context = tree_context(rows, url, TreeAsk(found, matched, coming, opened or ()))
        if found is None and opened is None:
            context["rows"] = rows.rows("", rows.opened())
    return render_to_string("chat/_picker_tree.html", context)


def tree_context(rows: TreeRows, url: str, ask: TreeAsk) -> dict:
    """What `_picker_tree.html` draws for `ask`: the filter's list or the tree, the total."""
    context = {"total": rows.total(), "rows_url": url}
    if ask.found is None:
        return {**context, "rows": rows.rows("", set(ask.opened))}
    more = {"shown": len(ask.found), "matched": f"{ask.matched:,}"}
    return {
        **context,
        "rows": rows.found(ask.found),
        "flat": True,
        "coming": ask.coming,
        "more": more if ask.matched > len(ask.found) else None,
    }


def first_view(panel: FilesPanel, session: Session, wiring: Wiring) -> dict:
    """The Files panel as the session's page first draws it: the rows, the total."""
    repo = wiring.repository.indexed()
    rows = TreeRows(panel, repo.root, held_selection(session, wiring.runtime, repo))
    url = reverse("chat:files_rows", args=[session.id])
    return {"rows": rows.rows("", rows.opened()), "total": rows.total(), "rows_url": url}


def pin_update(panel: FilesPanel, session_id: str, path: str, wiring: Wiring) -> str:
    """A pin's answer to the page that pressed it: the file's pin drawn again, and the
    total with the name of the sets now held (the follower's news naming them then finds
    the tab drawn from them)."""
    session = Session.objects.get(pk=session_id)
    repo = wiring.repository.indexed()
    rows = TreeRows(panel, repo.root, held_selection(session, wiring.runtime, repo))
    context = {"rows": rows.found([path]), "total": rows.total()}
    return render_to_string("chat/_picker_pinned.html", context)


def rows_frame(panel: FilesPanel, session_id: str, ask: TreeAsk, wiring: Wiring) -> str:
    """The rows a tab asked for on its socket, as one out-of-band swap of its tree. The
    socket's frames are taken in order, so these are drawn after every choice the tab sent
    before asking: they never undo one. A redraw that news of other sets asked for is
    refused ("") when the tab's rows show the sets the session holds now."""
    session = Session.objects.get(pk=session_id)
    repo = wiring.repository.indexed()
    chosen = held_selection(session, wiring.runtime, repo)
    if ask.shown and ask.shown == chosen.digest():
        return ""
    rows = TreeRows(panel, repo.root, chosen)
    url = reverse("chat:files_rows", args=[session_id])
    return render_to_string("chat/_picker_redraw.html", tree_context(rows, url, ask))
