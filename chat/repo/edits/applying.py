"""Applying edits: a claimed set matched whole, then written through the journal.

`accept_reply` is Accept all, Auto-apply and `--apply`: a reply's edits apply together or
not at all, so an edit still failing (not retried) writes nothing, and Auto-apply never
takes a protected file (`chat.repo.protected`); the person can still take part of a reply
file by file or hunk by hunk. `accept` claims rows (once across tabs and workers) and
applies them as one set: every path through the boundary, the whole set matched against
the disk BEFORE anything is written (one failure or conflict and nothing is), then
`journal.write_set` (temporary files first, renames only when all are written). Each
written file becomes a new version of its content object bound to the rows. `reapply`
takes undone edits again. Claims a dead process left are settled first (`journal.recover`).
Non-goals: proposing (`proposing`), undo (`undo`), rendering.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence

from django.db import transaction

from chat.repo import indexing
from chat.repo.edits import checks, journal
from chat.repo.edits.checks import SetOutcome
from chat.repo.edits.proposing import propose, trial
from chat.repo.edits.versions import number_of, record
from chat.repo.git import shown
from contextcore.edits import Outcome, apply_hunks, diff_hunks, failure_report, result_line
from history import edits as rows_
from history.models import EditJournal, Message, PendingEdit, Session

__all__ = ("SetOutcome", "accept", "accept_reply", "propose", "reapply", "trial")
Status = PendingEdit.Status
STANDING = (Status.FAILED, Status.CONFLICT)
WHOLE = (
    "Nothing was written: {what} cannot apply ({why}). A reply's edits apply together or "
    "not at all; accept files or hunks one by one to take part of it."
)
AUTO_WAITS = (
    "Auto-apply waited: this reply changes {paths}, which only you can accept ({why}). "
    "Review the edits and accept them yourself."
)


def auto_applies(session: Session, apply_now: bool = False) -> bool:
    """Whether the turn's edits apply when its reply ends: the session's Auto-apply, or
    `apply_now` (`acdc chat --apply`: this turn only; the switch is the person's)."""
    return bool(session.auto_apply or apply_now)


def accept_reply(
    session: Session, message: Message, *, repo: indexing.Repository, auto: bool = False
) -> SetOutcome:
    """The reply's pending edits as one set, or nothing with the reason."""
    journal.recover(repo)
    rows = list(message.edits.order_by("id"))
    pending = [row for row in rows if row.status == Status.PENDING]
    if not pending:
        return SetOutcome(["Nothing is pending there any more."])
    blocked = _blocked(rows, auto)
    if blocked:
        return SetOutcome(notice=blocked)
    return accept(session, [row.pk for row in pending], repo=repo)


def waiting_reason(session: Session, message: Message) -> str:
    """Why Auto-apply left the reply's pending edits for the person ("" if it did not)."""
    if not session.auto_apply:
        return ""
    rows = list(message.edits.order_by("id"))
    if not any(row.status == Status.PENDING for row in rows):
        return ""
    return _blocked(rows, auto=True)


def _blocked(rows: list[PendingEdit], auto: bool) -> str:
    """Why the reply's edits cannot apply as one set now, or ""."""
    standing = [row for row in rows if row.status in STANDING]
    if standing:
        first = standing[0]
        what = f"the edit of {first.path}" if len(standing) == 1 else f"{len(standing)} edits"
        return WHOLE.format(what=what, why=_why(first))
    protected = [row for row in rows if row.status == Status.PENDING and row.protected]
    if auto and protected:
        paths = ", ".join(dict.fromkeys(row.path for row in protected))
        return AUTO_WAITS.format(paths=paths, why=protected[0].protected)
    return ""


def _why(row: PendingEdit) -> str:
    """The first clause of a row's reason: the card or the line above has the rest."""
    reason = row.result.split(": ", 2)[-1] if row.result else row.status
    return re.split(r"[,.;](?:\s|$)", reason, maxsplit=1)[0][:200]


def accept(
    session: Session,
    ids: Iterable[int],
    *,
    repo: indexing.Repository,
    hunks: Collection[int] | None = None,
) -> SetOutcome:
    """Claim the pending rows of `ids` and apply them as one set. Rows another tab or
    worker claimed first are left to it; a set that cannot apply whole writes nothing.
    With `hunks`, the rows change one file and only those hunks of their change (numbered
    as `diff_hunks` gives them) are written; none chosen is a rejection."""
    if hunks is not None and not hunks:
        return SetOutcome([row.result for row in reject(ids)])
    journal.recover(repo)
    claim, claimed = rows_.edits_claim(ids)
    if not claimed:
        return SetOutcome(taken=True)
    return _apply(session, claim, claimed, repo, hunks)


def reapply(
    session: Session, message: Message, *, repo: indexing.Repository, path: str | None = None
) -> SetOutcome:
    """Apply the reply's undone edits (to `path` only, when given) again, as one set."""
    journal.recover(repo)
    undone = message.edits.filter(status=Status.UNDONE)
    undone = undone.filter(path=path) if path is not None else undone
    claim, claimed = rows_.edits_claim(undone.values_list("pk", flat=True), status=Status.UNDONE)
    if not claimed:
        return SetOutcome(taken=True)
    return _apply(session, claim, claimed, repo, None, refused_status=Status.UNDONE)


def reject(ids: Iterable[int]) -> list[PendingEdit]:
    """The person's No: the pending rows of `ids` (claimed once, like an accept) are
    marked rejected; nothing is read or written."""
    _, claimed = rows_.edits_claim(ids)
    for row in claimed:
        rows_.edit_mark(row, Status.REJECTED, f"rejected: {shown(row.path)}")
    if claimed and claimed[0].message_id:
        rows_.message_record_edits(claimed[0].message)
    if claimed:
        checks.tell_model(claimed[0].session, [row.result for row in claimed])
    return claimed


def _apply(session, claim, claimed, repo, hunks, refused_status=None) -> SetOutcome:
    try:
        checked = checks.check(repo, [rows_.op_of(row) for row in claimed])
        results, texts = checks.match(repo, session, checked)
        if not all(r.ok for r in results):
            return _refused(claimed, results, refused_status)
        partial = ""
        if hunks is not None:
            texts, partial = _chosen_hunks(checked.targets, texts, hunks)
        changes = _changes(repo, session, checked.targets, texts)
        try:
            written = journal.write_set(
                session, changes, repo=repo, claim=claim, purpose=EditJournal.Purpose.APPLY
            )
        except journal.WriteFailed as exc:
            return SetOutcome([str(exc)], notice=str(exc))
        return _applied(session, claimed, results, changes, written, repo, partial)
    finally:
        rows_.edits_release([row for row in claimed if row.claim])


def _refused(claimed, results, status) -> SetOutcome:
    """Nothing written: the failing rows say why (an undone row stays undone)."""
    for row, result in zip(claimed, results, strict=True):
        if result.ok:
            continue
        fallback = Status.CONFLICT if result.outcome is Outcome.CONFLICT else Status.FAILED
        rows_.edit_mark(row, status or fallback, result_line(result))
    report = failure_report(results)
    failing = next(row for row, r in zip(claimed, results, strict=True) if not r.ok)
    notice = WHOLE.format(what=f"the edit of {failing.path}", why=_why(failing))
    return SetOutcome([row.result for row in claimed], report, notice=notice)


def _changes(repo, session: Session, targets, texts: dict) -> list[journal.Change]:
    """The files to write, each with the version it holds now (recorded first)."""
    changes = []
    for key, text in texts.items():
        found = targets[key]
        before = record(repo, key, session) if found.text is not None else None
        changes.append(journal.Change(key, found.full, found.text, text, before))
    return changes


def _applied(session, claimed, results, changes, written, repo, partial: str) -> SetOutcome:
    outcome = SetOutcome(applied=True)
    with transaction.atomic():
        afters = {change.key: record(repo, change.key, session) for change in changes}
        befores = {change.key: change.version_before for change in changes}
        for row, result in zip(claimed, results, strict=True):
            key = result.op.path
            before, after = befores.get(key), afters.get(key)
            versions = None
            if result.outcome is Outcome.APPLIED and after is not None and after.file_hash:
                versions = (number_of(before), number_of(after))
            line = result_line(result, versions)
            if partial and versions:
                line = f"applied: {shown(key)} v{versions[0]}→v{versions[1]}, {partial}"
            rows_.edit_mark(row, Status.APPLIED, line, before=before, after=after)
            outcome.lines.append(row.result)
        journal.close(written)
    outcome.diffs = [(change.key, change.before, change.after) for change in changes]
    if claimed[0].message_id:
        rows_.message_record_edits(claimed[0].message)
    checks.tell_model(session, list(dict.fromkeys(outcome.lines)))
    return outcome


def _chosen_hunks(targets, texts: dict, hunks: Collection[int]):
    """The one changed file's text with only the chosen hunks, and how much of it that is
    ("+2 −1, 1 of 2 hunks"). A created or deleted file is one change, taken whole."""
    if len(texts) != 1:
        raise ValueError("hunks are chosen in one file at a time")
    [(key, after)] = texts.items()
    before = targets[key].text
    if before is None or after is None:
        return texts, ""
    chosen = apply_hunks(before, after, hunks)
    total, kept = len(diff_hunks(before, after)), diff_hunks(before, chosen)
    plus, minus = sum(h.added for h in kept), sum(h.removed for h in kept)
    return {key: chosen}, f"+{plus} −{minus}, {len(set(hunks))} of {total} hunks"


def preview(session: Session, rows: Sequence[PendingEdit], *, repo) -> list[tuple]:
    """(path, text now, text after) for each file the rows would change, nothing written."""
    return preview_with_results(session, rows, repo=repo)[1]


def preview_with_results(session: Session, rows: Sequence[PendingEdit], *, repo):
    """The rows' results against the files now, and `preview`'s changes."""
    checked = checks.check(repo, [rows_.op_of(row) for row in rows])
    results, texts = checks.match(repo, session, checked)
    return results, [(key, checked.targets[key].text, text) for key, text in texts.items()]
