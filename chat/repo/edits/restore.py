"""Rolling files back to a checkpoint: the content acdc's edits since then replaced.

A checkpoint records message positions, not files; the files acdc changed after it are
the paths of the session's applied (or undone) edits whose reply came after it. Each file
gets back the content it had before the first of those edits (a file created since is
removed), written through `disk` and recorded as a new version: nothing is erased. Each
file is judged on its own: one whose bytes are not what acdc last wrote (the person, or
another tool, changed it since) is refused with the reason and left as it is; one already
at its checkpoint content is left too. Non-goals: the conversation (`chat.session.checkpoints`),
files acdc never wrote, git.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import groupby

from django.db.models import Q

from chat.repo import indexing
from chat.repo.edits import disk
from chat.repo.edits.versions import number_of, record
from history.models import Checkpoint, PendingEdit, Session

Status = PendingEdit.Status


@dataclass
class Restored:
    lines: list[str] = field(default_factory=list)  # one per file: restored, unchanged, refused
    refused: list[str] = field(default_factory=list)  # the paths left as they are


def edits_since(session: Session, checkpoint: Checkpoint) -> list[PendingEdit]:
    """The session's edits acdc wrote after the checkpoint, by path, oldest first."""
    later = Q(message__seq__gt=checkpoint.last_seq) | Q(
        message=None, created_at__gt=checkpoint.created_at
    )
    rows = PendingEdit.objects.filter(later, session=session)
    rows = rows.filter(status__in=(Status.APPLIED, Status.UNDONE)).exclude(version_after=None)
    return list(rows.select_related("version_before", "version_after").order_by("path", "id"))


def _text(version) -> str | None:
    return None if version is None or version.file_hash is None else version.content


def _last_written(rows: list[PendingEdit]) -> str | None:
    """The text acdc last wrote to the file: the last applied edit's result, or, when the
    last reply's edits to it were undone, the text that undo wrote back."""
    last = rows[-1]
    if last.status == Status.APPLIED:
        return _text(last.version_after)
    undone = [row for row in rows if row.message_id == last.message_id]
    return _text(undone[0].version_before)


def restore(session: Session, checkpoint: Checkpoint, *, repo: indexing.Repository) -> Restored:
    """Write back each file's content at the checkpoint, file by file."""
    done = Restored()
    for key, group in groupby(edits_since(session, checkpoint), key=lambda row: row.path):
        rows = list(group)
        wanted, written = _text(rows[0].version_before), _last_written(rows)
        try:
            found = disk.target(repo, key)
        except disk.EditRefused as exc:
            done.lines.append(f"not restored: {exc}")
            done.refused.append(key)
            continue
        if found.text == wanted:
            done.lines.append(f"unchanged: {key} is as it was at the checkpoint")
            continue
        if found.text != written:
            done.lines.append(
                f"not restored: {key} changed since acdc last wrote it; it was left as it is"
            )
            done.refused.append(key)
            continue
        before = record(repo, key, session) if found.text is not None else None
        if wanted is None:
            disk.remove(found.full, repo.own_writes)
            done.lines.append(f"restored: {key} removed (created after the checkpoint)")
            record(repo, key, session)
            continue
        disk.write_text(found.full, wanted, repo.own_writes)
        now = record(repo, key, session)
        done.lines.append(f"restored: {key} v{number_of(before)}→v{number_of(now)}")
    return done
