"""Proposing and applying edits: the matcher against the disk, then the atomic writes.

`propose` stores a turn's ops as pending rows after trying them against the current files
(so a call that cannot apply says so at once, with the closest lines), and applies them
when the session's auto-apply is on. `accept` claims rows (once across tabs and workers)
and applies them as one set: every path through the boundary (`disk.target`), the whole
set matched with `contextcore.edits.apply_edits` against the disk (re-anchored where the
file changed since the model read it) BEFORE anything is written; one refusal, failure or
conflict and nothing is written. Each written file becomes a new version of its content
object (the version before it is recorded first), bound to the row that proposed it.
Non-goals: rendering diffs for the page, undo (`chat.repo.edits.undo`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace

from chat.repo import indexing
from chat.repo.edits import disk
from chat.repo.edits.versions import file_version, number_of, record, seen_texts
from contextcore.edits import (
    EditOp,
    EditResult,
    Outcome,
    apply_edits,
    apply_hunks,
    diff_hunks,
    failure_report,
    result_line,
)
from history import edits as rows_
from history.models import PendingEdit, Session

Status = PendingEdit.Status
_UNAPPLIED = (Status.FAILED, Status.CONFLICT)
# Set by `acdc chat --apply` around its turn: edits apply as they come, as with auto-apply,
# for this turn only (the session's own switch is the person's, in the page).
APPLY_NOW: ContextVar[bool] = ContextVar("acdc_apply_now", default=False)


@dataclass
class SetOutcome:
    """What became of one set of edits: a line per edit, and the report when some failed."""

    lines: list[str] = field(default_factory=list)
    report: str = ""
    diffs: list[tuple[str, str | None, str | None]] = field(default_factory=list)
    applied: bool = False  # every edit of the set applied (or was already there)

    def text(self) -> str:
        return "\n".join([*self.lines, *([self.report] if self.report else [])])


@dataclass(frozen=True)
class _Checked:
    ops: list[EditOp]  # with paths as the repository names them
    targets: dict[str, disk.Target]
    refused: dict[int, str]  # op index -> why its path may not be edited


def _check(repo: indexing.Repository, ops: Sequence[EditOp]) -> _Checked:
    checked, targets, refused = [], {}, {}
    for index, op in enumerate(ops):
        try:
            found = disk.target(repo, op.path)
            if op.kind != "delete":
                disk.check_new_text(repo, found.key, op.new_text)
        except disk.EditRefused as exc:
            refused[index] = str(exc)
            checked.append(op)
            continue
        targets[found.key] = found
        checked.append(replace(op, path=found.key))
    return _Checked(checked, targets, refused)


def _match(repo, session: Session, checked: _Checked):
    """Every op's result against the disk, and the new texts; refused paths fail without
    being matched."""
    files = {key: t.text for key, t in checked.targets.items()}
    seen = seen_texts(repo, checked.ops, session)
    fine = [op for i, op in enumerate(checked.ops) if i not in checked.refused]
    batch = apply_edits(fine, files, seen=seen)
    matched = iter(batch.results)
    results = []
    for index, op in enumerate(checked.ops):
        if index in checked.refused:
            reason = checked.refused[index]
            results.append(EditResult(index, op, Outcome.FAILED, reason=reason))
        else:
            results.append(replace(next(matched), index=index))
    return results, batch.texts


def propose(
    session: Session,
    ops: Sequence[EditOp],
    *,
    repo: indexing.Repository,
    turn_id: str = "",
    call_id: str = "",
    first_block: int | None = None,
    message=None,
) -> SetOutcome:
    """Store `ops` as rows, pending review (or applied at once with auto-apply). An op that
    cannot apply now is stored as failed or conflict and reported with the closest lines."""
    ops = [_with_base(repo, session, op) for op in ops]
    checked = _check(repo, ops)
    results, _ = _match(repo, session, checked)
    rows = rows_.edits_create(
        session=session,
        ops=checked.ops,
        turn_id=turn_id,
        call_id=call_id,
        first_block=first_block,
        message=message,
    )
    outcome = SetOutcome(report=failure_report(results))
    waiting = _mark_proposed(rows, results)
    if waiting and (session.auto_apply or APPLY_NOW.get()):
        applied = accept(session, [row.pk for row in waiting], repo=repo)
        outcome.diffs = applied.diffs
        if applied.report:
            outcome.report = "\n".join(p for p in (outcome.report, applied.report) if p)
    stored = list(PendingEdit.objects.filter(pk__in=[row.pk for row in rows]).order_by("id"))
    # A failed edit is told by the report, with the file's closest lines.
    outcome.lines = [row.result for row in stored if row.status not in _UNAPPLIED]
    outcome.applied = all(row.status == Status.APPLIED for row in stored)
    return outcome


def trial(session: Session, ops: Sequence[EditOp], *, repo: indexing.Repository) -> list:
    """What `propose` would find for `ops` now, with nothing stored nor written."""
    ops = [_with_base(repo, session, op) for op in ops]
    results, _ = _match(repo, session, _check(repo, ops))
    return results


def _mark_proposed(rows: list[PendingEdit], results: list[EditResult]) -> list[PendingEdit]:
    """Each row's result as proposed; returns the rows that wait for review."""
    waiting = []
    for row, result in zip(rows, results, strict=True):
        if result.ok:
            waiting.append(row)
            row.result = f"pending review: {row.path}, +{result.added} −{result.removed}"
            row.save(update_fields=["result"])
        else:
            status = Status.CONFLICT if result.outcome is Outcome.CONFLICT else Status.FAILED
            rows_.edit_mark(row, status, result_line(result))
    return waiting


def _with_base(repo: indexing.Repository, session: Session, op: EditOp) -> EditOp:
    """The op names the version the model last saw through acdc, when it named none."""
    if op.base_sha256 is not None:
        return op
    version = file_version(repo, op.path, session)
    return replace(op, base_sha256=version.file_hash) if version and version.file_hash else op


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
    _, claimed = rows_.edits_claim(ids)
    if not claimed:
        return SetOutcome(applied=False)
    try:
        return _apply_claimed(session, claimed, repo, hunks)
    except BaseException:
        rows_.edits_release([row for row in claimed if row.claim])
        raise


def reject(ids: Iterable[int]) -> list[PendingEdit]:
    """The person's No: the pending rows of `ids` (claimed once, like an accept) are
    marked rejected; nothing is read or written."""
    _, claimed = rows_.edits_claim(ids)
    for row in claimed:
        rows_.edit_mark(row, Status.REJECTED, f"rejected: {row.path}")
    if claimed and claimed[0].message_id:
        rows_.message_record_edits(claimed[0].message)
    return claimed


def _apply_claimed(session: Session, claimed: list[PendingEdit], repo, hunks=None) -> SetOutcome:
    checked = _check(repo, [rows_.op_of(row) for row in claimed])
    results, texts = _match(repo, session, checked)
    if not all(r.ok for r in results):
        for row, result in zip(claimed, results, strict=True):
            if not result.ok:
                status = Status.CONFLICT if result.outcome is Outcome.CONFLICT else Status.FAILED
                rows_.edit_mark(row, status, result_line(result))
        rows_.edits_release([row for row in claimed if row.claim])
        lines = [row.result for row in claimed]
        return SetOutcome(lines, failure_report(results))
    partial = ""
    if hunks is not None:
        texts, partial = _chosen_hunks(checked.targets, texts, hunks)
    befores, afters, diffs = _write_all(repo, session, checked.targets, texts)
    outcome = SetOutcome(diffs=diffs, applied=True)
    for row, result in zip(claimed, results, strict=True):
        key = result.op.path
        before, after = befores.get(key), afters.get(key)
        versions = None
        if result.outcome is Outcome.APPLIED and after is not None and after.file_hash:
            versions = (number_of(before), number_of(after))
        line = result_line(result, versions)
        if partial and versions:
            line = f"applied: {key} v{versions[0]}→v{versions[1]}, {partial}"
        rows_.edit_mark(row, Status.APPLIED, line, before=before, after=after)
        outcome.lines.append(row.result)
    if claimed[0].message_id:
        rows_.message_record_edits(claimed[0].message)
    return outcome


def _chosen_hunks(targets: dict[str, disk.Target], texts: dict, hunks: Collection[int]):
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


def _write_all(repo, session: Session, targets: dict[str, disk.Target], texts: dict):
    """Write every changed file; the version before each is recorded first."""
    befores, afters, diffs = {}, {}, []
    for key, text in texts.items():
        found = targets[key]
        befores[key] = record(repo, key, session) if found.text is not None else None
        if text is None:
            disk.remove(found.full)
        else:
            disk.write_text(found.full, text)
        afters[key] = record(repo, key, session)
        diffs.append((key, found.text, text))
    return befores, afters, diffs


def preview(session: Session, rows: Sequence[PendingEdit], *, repo) -> list[tuple]:
    """(path, text now, text after) for each file the rows would change, nothing written."""
    checked = _check(repo, [rows_.op_of(row) for row in rows])
    _, texts = _match(repo, session, checked)
    return [(key, checked.targets[key].text, text) for key, text in texts.items()]
