"""Proposing edits: a turn's ops become rows, each judged at once; nothing is written.

`propose` stores ops as they come (an edit tool call during the turn, a reply's blocks when
it has been streamed), each matched against the file as the turn's earlier pending edits
would leave it, so the second edit of a file meets the text the first would write. An op
that cannot apply is stored failed or conflict with why (its card shows it beside the
others); content the boundary refused is never stored, only its path and the reason. A
failure the model was told of (`history.edits.edits_told`) is `retried` once the model
proposes that file again (its new edit stands for it, applying or not). After
ACDC_MAX_FAILED_EDITS failures the turn takes no more edits and says so. Applying is
`applying`'s, once the reply is whole.
Non-goals: applying, the retry request, rendering.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings

from chat.repo import indexing
from chat.repo.edits import checks
from chat.repo.edits.checks import SetOutcome
from chat.repo.git import shown
from chat.repo.protected import protection
from contextcore.edits import EditOp, EditResult, Outcome, failure_report, result_line
from history import edits as rows_
from history.models import Message, PendingEdit, Session

Status = PendingEdit.Status
STOPPED = (
    "Edits are stopped for this turn: {count} edits failed. Nothing more was stored. Tell "
    "the developer what you meant to change, and read the files again before editing."
)
QUEUED = "the developer reviews it after your reply; the file is unchanged until then"
QUEUED_AUTO = "it is written when your reply ends, together with your other edits"


def propose(
    session: Session,
    ops: Sequence[EditOp],
    *,
    repo: indexing.Repository,
    turn_id: str = "",
    call_id: str = "",
    blocks: Sequence[int] | None = None,
    message: Message | None = None,
    auto: bool = False,
) -> SetOutcome:
    """Store `ops` as rows of the turn, pending review or failed with why. `blocks` gives
    each op's place among the reply's blocks; `auto` says the reply will apply itself."""
    failures = _failures(turn_id)
    if failures >= settings.ACDC_MAX_FAILED_EDITS:
        stopped = STOPPED.format(count=failures)
        return SetOutcome([stopped], report=stopped)
    ops = [checks.with_base(repo, session, op) for op in ops]
    checked = checks.check(repo, ops)
    results, _ = checks.match(repo, session, checked, _earlier(session, turn_id))
    rows = rows_.edits_create(
        session=session,
        ops=checked.ops,
        turn_id=turn_id,
        call_id=call_id,
        blocks=blocks,
        message=message,
        refused=checked.refused,
    )
    waiting = _mark(repo, rows, results, auto)
    rows_.edits_supersede(turn_id, {row.path for row in rows})
    outcome = SetOutcome(report=failure_report(results))
    outcome.lines = [row.result for row in waiting]
    return outcome


def _failures(turn_id: str) -> int:
    if not turn_id:
        return 0
    failed = (Status.FAILED, Status.CONFLICT, Status.RETRIED)
    return PendingEdit.objects.filter(turn_id=turn_id, status__in=failed).count()


def _earlier(session: Session, turn_id: str) -> list[EditOp]:
    """The turn's edits still pending, as the matcher takes them (in their order)."""
    if not turn_id:
        return []
    rows = PendingEdit.objects.filter(session=session, turn_id=turn_id, status=Status.PENDING)
    return [rows_.op_of(row) for row in rows.order_by("id")]


def _mark(repo, rows: list[PendingEdit], results: list[EditResult], auto: bool):
    """Each row's result as proposed; returns the rows that wait for review."""
    waiting = []
    for row, result in zip(rows, results, strict=True):
        if not result.ok:
            status = Status.CONFLICT if result.outcome is Outcome.CONFLICT else Status.FAILED
            rows_.edit_mark(row, status, result_line(result))
            continue
        waiting.append(row)
        row.protected = protection(repo.root, row.path)
        row.result = pending_line(row, result, auto)
        row.save(update_fields=["result", "protected"])
    return waiting


def pending_line(row: PendingEdit, result: EditResult, auto: bool) -> str:
    """What the model is told of an edit that waits: its size, and when it is written."""
    counts = f"{shown(row.path)}, +{result.added} −{result.removed}"
    if result.outcome is Outcome.ALREADY_APPLIED:
        return f"pending review: {shown(row.path)}, already in the file"
    if row.protected:
        return f"pending review: {counts} (a protected file: {row.protected}; {QUEUED})"
    return f"pending review: {counts} ({QUEUED_AUTO if auto else QUEUED})"


def trial(session: Session, ops: Sequence[EditOp], *, repo: indexing.Repository) -> list:
    """What `propose` would find for `ops` now, with nothing stored."""
    ops = [checks.with_base(repo, session, op) for op in ops]
    results, _ = checks.match(repo, session, checks.check(repo, ops))
    return results
