"""The file watcher's news and the counting passes, turned into the frames the tabs swap.

`FileNews` is what the watcher saw, as plain data: the files edited outside acdc, the
files present and gone, and for each session the files it holds that changed.
`files_frame` and `session_frames` do the product's work on it (counting the changed
files, drawing the rows new to the pages; bringing each holding session's engine and HUD
up to date, its pending edit cards) and return the frames: one for every tab of the
repository, some for each session. `count_update` is a counting pass's message, with the
rows of files found refused drawn again. Non-goals: watching (chat.repo.watcher), sending
(chat.live).
"""

from __future__ import annotations

from pathlib import Path

from django.template.loader import render_to_string

from chat.repo.listings import FilesPanel
from chat.repo.watcher import FileNews
from chat.session import Wiring, setchanges
from chat.web.edits.cards import pending_frames
from chat.web.fragments import render_hud
from chat.web.panels.fileupdates import picker_update
from chat.web.panels.tree import file_rows, held_selection, total_of
from history.models import Session


def files_frame(panel: FilesPanel, repo: Path, news: FileNews) -> str:
    """The frame for every tab of the repository: the changed files counted again, the
    rows new to the pages drawn, the rows of files found refused drawn again."""
    update: dict = {"changed": news.changed, "added": news.present, "removed": news.gone}
    update["shown"] = panel.listings.known_folders(repo)  # before anything reads the listing again
    if news.present:  # new or edited contents get their token counts at once
        counts = panel.counts.count(repo, list(news.present))
        update["counts"] = {p: c.as_json() for p, c in counts.items()}
        update["outline_counts"] = panel.outlines.counts(repo, news.present)
        update["redrawn"] = _refused_rows(panel, repo, counts)
    if new := panel.listings.unlisted(repo, news.present):  # for the folders open in pages
        update["rows"] = file_rows(panel, repo, new)
    text = picker_update(panel, repo, **update)
    panel.listings.announce(repo, new, news.gone)
    return text


def session_frames(
    panel: FilesPanel, repo: Path, session_id: str, paths: tuple[str, ...], wiring: Wiring
) -> list[str]:
    """The frames for the tabs of a session holding changed `paths`: its engine and HUD
    brought up to date, the Files panel's total (the paths were counted again), its pending
    edit cards drawn again (none for a session gone)."""
    try:
        hud = setchanges.refresh_sets(session_id, wiring)
    except Session.DoesNotExist:
        return []
    session = Session.objects.get(pk=session_id)
    held = held_selection(session, wiring.runtime, wiring.repository.indexed())  # its total
    total = render_to_string(
        "chat/_picker_total.html", {"total": total_of(panel, repo, held), "oob": True}
    )
    cards = pending_frames(session_id, list(paths), wiring.repository.indexed())
    return [render_hud(hud), total, *([cards] if cards else [])]


def count_update(panel: FilesPanel, repo: Path, paths: list[str], **fields) -> str:
    """A counting pass's message (`fileupdates.picker_update`), the rows of the files it
    found refused (binary, too large) drawn again so they cannot be ticked."""
    counts = fields.get("counts") or {}
    refused = [p for p, c in counts.items() if not isinstance(c, int)]
    rows = file_rows(panel, repo, refused) if refused else []
    return picker_update(panel, repo, paths=paths, redrawn=rows, **fields)


def _refused_rows(panel: FilesPanel, repo: Path, counts: dict) -> list[dict]:
    refused = [p for p, c in counts.items() if c.tokens is None]
    return file_rows(panel, repo, refused) if refused else []
