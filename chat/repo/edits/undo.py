"""Undoing applied edits, per file or for a whole reply, as new versions.

Undo writes back the content a file had before the reply's first applied edit to it (or
deletes a file the reply created) and records that as a new version: nothing is erased,
so the undone state and the edit both stay in the file's history, and `applying.reapply`
can take the edits again. The rows are claimed first (once across tabs), and every file is
checked before any is written: one that changed since acdc wrote it (its bytes are not the
version acdc recorded) is refused with the reason, and nothing is written; the files are
then written through the journal, together or not at all. Non-goals: git, the conversation.
"""

from __future__ import annotations

from itertools import groupby

from django.db import transaction

from chat.repo import indexing
from chat.repo.edits import checks, disk, journal
from chat.repo.edits.checks import SetOutcome
from chat.repo.edits.versions import number_of, record
from chat.repo.git import shown
from history import edits as rows_
from history.models import EditJournal, Message, PendingEdit, Session

Status = PendingEdit.Status


def undo(
    session: Session, message: Message, *, repo: indexing.Repository, path: str | None = None
) -> SetOutcome:
    """Undo the message's applied edits (to `path` only, when given)."""
    journal.recover(repo)
    mine = message.edits.filter(status=Status.APPLIED).exclude(version_after=None)
    if path is not None:
        mine = mine.filter(path=path)
    claim, claimed = rows_.edits_claim(mine.values_list("pk", flat=True), status=Status.APPLIED)
    if not claimed:
        return SetOutcome(["nothing to undo"], taken=True)
    try:
        return _undo_claimed(session, message, claim, claimed, repo)
    finally:
        rows_.edits_release([row for row in claimed if row.claim])


def _undo_claimed(session, message, claim: str, claimed: list[PendingEdit], repo) -> SetOutcome:
    by_path = {p: list(rows) for p, rows in groupby(sorted(claimed, key=_order), key=_path)}
    plans, problems = {}, []
    for key, rows in by_path.items():
        before, after = rows[0].version_before, rows[-1].version_after
        try:
            found = disk.target(repo, key)
        except disk.EditRefused as exc:
            problems.append(f"not undone: {exc}")
            continue
        if found.sha256 != after.file_hash:
            problems.append(
                f"conflict: {shown(key)} changed since acdc wrote it (v{number_of(after)}); "
                "it was not undone."
            )
            continue
        plans[key] = (found, before.content if before is not None else None, rows)
    if problems:
        return SetOutcome(
            problems, applied=False, notice=" ".join(["Nothing was undone:", *problems])
        )
    changes = [
        journal.Change(key, found.full, found.text, content)
        for key, (found, content, _) in plans.items()
    ]
    try:
        written = journal.write_set(
            session, changes, repo=repo, claim=claim, purpose=EditJournal.Purpose.UNDO
        )
    except journal.WriteFailed as exc:
        return SetOutcome([str(exc)], notice=str(exc))
    outcome = SetOutcome(applied=True)
    with transaction.atomic():
        for key, (found, content, rows) in plans.items():
            now = record(repo, key, session)
            line = f"undone: {shown(key)} v{number_of(rows[-1].version_after)}→v{number_of(now)}"
            for row in rows:
                rows_.edit_mark(row, Status.UNDONE, line)
            outcome.lines.append(line)
            outcome.diffs.append((key, found.text, content))
        journal.close(written)
    rows_.message_record_edits(message)
    checks.tell_model(session, outcome.lines)
    return outcome


def _order(row: PendingEdit) -> tuple[str, int]:
    return (row.path, row.pk)


def _path(row: PendingEdit) -> str:
    return row.path
