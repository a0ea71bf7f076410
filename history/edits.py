"""Pending edits as rows: proposed by a tool call or a reply's block, claimed once, marked.

`edits_create` stores one row per `EditOp` of a turn; `edits_claim` takes rows for applying
(or undoing) with one conditional UPDATE, so of two tabs or workers that accept the same
edit at once exactly one gets it; `edit_mark` records what became of a claimed row and
lets it go. A claim names its process (`host:pid:process:random`) and the time it was
taken; `claim_is_dead` says when its holder is gone (a dead process of this machine, or a
claim older than CLAIM_SECONDS), so its rows can be finished or given back.
`edits_bind_message` ties a turn's rows to its assistant message once that is stored,
and `message_record_edits` fills the message's `files_modified` and `edit_results`
(seed 000's schema) from them. Non-goals: the disk and the matcher
(`chat.repo.edits`), deciding what is accepted (the person, or the session's auto-apply).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from contextcore.edits import EditOp
from history import processes
from history.models import Message, ObjectVersion, PendingEdit, Session

Status = PendingEdit.Status
CLAIM_SECONDS = 600  # far beyond any apply; a holder on another machine is given this long


def edits_create(
    *,
    session: Session,
    ops: Sequence[EditOp],
    turn_id: str = "",
    call_id: str = "",
    first_block: int | None = None,
    blocks: Sequence[int] | None = None,
    message: Message | None = None,
    refused: Iterable[int] = (),
) -> list[PendingEdit]:
    """One pending row per op; a reply's blocks are numbered from `first_block`, or by
    `blocks` (each op's place among the reply's blocks). The ops at the places `refused`
    names keep their path only: refused content is never stored."""
    refused = set(refused)
    rows = [
        PendingEdit(
            session=session,
            message=message,
            turn_id=turn_id,
            call_id=call_id,
            block_index=_block_index(n, first_block, blocks),
            source=op.source,
            path=op.path[:1024],  # a hostile path is refused, and stored as far as it fits
            kind=op.kind,
            old_text="" if n in refused else op.old_text,
            new_text="" if n in refused else op.new_text,
            replace_all=op.replace_all,
            overwrite=op.overwrite,
            base_sha256=op.base_sha256 or "",
        )
        for n, op in enumerate(ops)
    ]
    with transaction.atomic():
        for row in rows:
            row.save()
    return rows


def _block_index(n: int, first: int | None, blocks: Sequence[int] | None) -> int | None:
    if blocks is not None:
        return blocks[n]
    return None if first is None else first + n


def op_of(row: PendingEdit) -> EditOp:
    """The row as the matcher takes it."""
    return EditOp(
        path=row.path,
        kind=row.kind,  # type: ignore[arg-type]
        old_text=row.old_text,
        new_text=row.new_text,
        replace_all=row.replace_all,
        overwrite=row.overwrite,
        base_sha256=row.base_sha256 or None,
        source=row.source or "edit_file",
    )


def new_claim() -> str:
    return f"{processes.name()}:{uuid.uuid4().hex[:16]}"


def claim_is_dead(claim: str, claimed_at: datetime | None, now: datetime | None = None) -> bool:
    """Whether the holder of `claim` is gone: a process of this machine that has ended (or
    an earlier process that had this one's pid), or a claim older than CLAIM_SECONDS."""
    if not claim:
        return False
    now = now or timezone.now()
    if claimed_at is None or now - claimed_at > timedelta(seconds=CLAIM_SECONDS):
        return True
    return processes.gone(claim)


def edits_claim(
    ids: Iterable[int], *, status: str = Status.PENDING
) -> tuple[str, list[PendingEdit]]:
    """Claim the rows of `ids` still in `status` and claimed by nobody: one UPDATE, so a
    row claimed by another tab or worker is left out. Returns the claim and its rows."""
    token = new_claim()
    mine = PendingEdit.objects.filter(pk__in=list(ids), status=status, claim="")
    mine.update(claim=token, claimed_at=timezone.now())
    return token, list(PendingEdit.objects.filter(claim=token).order_by("id"))


def edits_release(rows: Iterable[PendingEdit]) -> None:
    """Give claimed rows back unchanged (the set they belong to was not applied)."""
    PendingEdit.objects.filter(pk__in=[row.pk for row in rows]).update(claim="", claimed_at=None)
    for row in rows:
        row.claim, row.claimed_at = "", None


def dead_claims() -> list[tuple[str, datetime | None]]:
    """The claims whose holders are gone; a cheap query while nothing is claimed."""
    held = PendingEdit.objects.exclude(claim="").values_list("claim", "claimed_at").distinct()
    now = timezone.now()
    return [(claim, at) for claim, at in held if claim_is_dead(claim, at, now)]


def edits_told(turn_id: str) -> int:
    """The turn's failed edits so far have been sent to the model (a tool round's results,
    or the automatic retry): a later edit of the same file stands in for them."""
    if not turn_id:
        return 0
    failed = PendingEdit.objects.filter(
        turn_id=turn_id, status__in=(Status.FAILED, Status.CONFLICT), told=False
    )
    return failed.update(told=True)


def edits_supersede(turn_id: str, paths: Iterable[str]) -> int:
    """The told failures of the turn on `paths` are retried: the model proposed those
    files again, and its new edit (applying or not) is what the reply means."""
    paths = list(paths)
    if not turn_id or not paths:
        return 0
    told = PendingEdit.objects.filter(
        turn_id=turn_id, path__in=paths, told=True, status__in=(Status.FAILED, Status.CONFLICT)
    )
    return told.update(status=Status.RETRIED)


def edit_mark(
    row: PendingEdit,
    status: str,
    result: str,
    *,
    before: ObjectVersion | None = None,
    after: ObjectVersion | None = None,
) -> None:
    """Record what became of a claimed row, and let it go."""
    row.status, row.result, row.claim, row.claimed_at = status, result, "", None
    fields = ["status", "result", "claim", "claimed_at", "updated_at"]
    if before is not None:
        row.version_before = before
        fields.append("version_before")
    if after is not None:
        row.version_after = after
        fields.append("version_after")
    row.save(update_fields=fields)


def edits_bind_message(*, session: Session, turn_id: str, message: Message) -> int:
    """The turn's rows proposed before its answer was stored belong to that answer."""
    mine = PendingEdit.objects.filter(session=session, turn_id=turn_id, message=None)
    return mine.update(message=message)


def message_record_edits(message: Message) -> None:
    """The message's `files_modified` (paths its applied edits changed) and `edit_results`
    (one entry per edit: path, status, result), from its rows."""
    rows = list(message.edits.order_by("id"))
    applied = [row.path for row in rows if row.status == Status.APPLIED]
    message.files_modified = list(dict.fromkeys(applied))
    keep = [r for r in message.edit_results or [] if "edit" not in r]  # tool-call entries
    message.edit_results = keep + [
        {
            "edit": row.pk,
            "path": row.path,
            "kind": row.kind,
            "status": row.status,
            "result": row.result,
            "call_id": row.call_id,
            "block": row.block_index,
        }
        for row in rows
    ]
    message.save(update_fields=["files_modified", "edit_results"])
