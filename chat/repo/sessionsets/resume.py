"""Resume (seed 001 §3.6): on session load, every sourced object of the session is
reconciled with the disk, and the repository boundary is applied again: an internal path
leaves the active and pinned sets, a secret the person has not selected is not read.
"""

from __future__ import annotations

from chat.repo import boundary, indexing
from chat.repo.sessionsets.entries import display_path, ever_read
from history.models import ContentObject, Session, SessionObject


def resume(session: Session, repo: indexing.Repository) -> list[tuple[str, str]]:
    """§3.6 on session load: reconcile every sourced object of the session with the disk.

    Returns (path, outcome) per file: updated (new version), deleted (null version
    written), unreachable (cannot be read now: the latest version stays), unchanged,
    refused (an internal path, or a secret the person has not selected: not read, and an
    internal one leaves the active and pinned sets)."""
    report = []
    links = SessionObject.objects.filter(
        session=session, object__type=ContentObject.Type.FILE
    ).select_related("object")
    for link in links:
        path = display_path(link.object, repo)
        found = boundary.verdict(path, root=repo.root)
        if found.kind == "internal" or (
            found.kind == "secret" and not (link.active or link.pinned)
        ):
            _withdraw(link, found)
            report.append((path, "refused"))
            continue
        latest = link.object.latest_version()
        if latest is not None and latest.file_hash is None and latest.content is None:
            if not (repo.root / path).exists():
                report.append((path, "unchanged"))  # a stub or an already-recorded deletion
                continue
            if not ever_read(link.object):
                report.append((path, "unchanged"))  # discovery stubs stay unread
                continue
        try:
            result = indexing.index_file(
                repo, path, trigger=indexing.Trigger.RESUME, allow_secret=True
            )
        except indexing.IndexingError:
            report.append((path, "unreachable"))
            continue
        if result.deleted and result.outcome == indexing.Outcome.UPDATED:
            report.append((path, "deleted"))
        elif result.outcome == indexing.Outcome.UPDATED:
            report.append((path, "updated"))
        else:
            report.append((path, "unchanged"))
    return report


def _withdraw(link: SessionObject, found: boundary.Verdict) -> None:
    if found.kind == "internal" and (link.active or link.pinned):
        link.active = link.pinned = False
        link.save(update_fields=["active", "pinned"])
