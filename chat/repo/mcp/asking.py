"""The person's answer to a call of an MCP tool that is not read-only: Run once, Always
allow this tool, or Deny.

A page's turn that meets such a call stores a `ToolApproval` row, shows its card (through
the `waiting` it was handed) and waits (`Connections.approvals`, woken by the view that
stored the answer, polling the store too) for at most ACDC_MCP_APPROVAL_SECONDS; Stop ends
the wait as stopped, silence as expired, and neither runs anything. The answer is claimed
once (`claim`: a conditional update), so a second tab or a double click runs nothing twice.
An answer of "always" is the session's standing permission for that tool (`always_allowed`).
Non-goals: drawing the card (`chat.web.approval_cards`), calling the tool (`model_calls`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings

from chat.repo.commands.waits import ProposalWaits
from chat.repo.mcp.offer import Listed
from history.models import Session, ToolApproval

ONCE, ALWAYS, DENY = "once", "always", "deny"
DECISIONS = (ONCE, ALWAYS, DENY)
Status = ToolApproval.Status
RAN = (Status.ONCE, Status.ALWAYS)
DEFAULT_SECONDS = 600
# Shows the card while the call waits: (the call as shown, the approval's facts).
Waiting = Callable[[str, dict], Awaitable[None]]


class ApprovalGone(LookupError):
    """The approval is not there (deleted with its session, or never was)."""


class AlreadyAnswered(Exception):
    """Someone answered first (or the wait ended); `approval` is the row as it is now."""

    def __init__(self, approval: ToolApproval) -> None:
        super().__init__(f"approval {approval.pk} was already answered: {approval.status}")
        self.approval = approval


def wait_seconds() -> int:
    return int(getattr(settings, "ACDC_MCP_APPROVAL_SECONDS", DEFAULT_SECONDS))


def facts(row: ToolApproval) -> dict[str, Any]:
    """What the card and the turn know of an approval."""
    return {
        "id": row.pk,
        "mcp": True,
        "tool": row.tool,
        "arguments": row.arguments,
        "annotations": row.annotations,
        "status": row.status,
    }


def always_allowed(session_id: str) -> frozenset[str]:
    """The tools the person always allows in this session."""
    rows = ToolApproval.objects.filter(session_id=session_id, status=Status.ALWAYS)
    return frozenset(rows.values_list("tool", flat=True))


def claim(approval_id: int, decision: str) -> ToolApproval:
    """The pending approval, moved to `decision`'s status; raises when it is not pending."""
    if decision not in DECISIONS:
        raise ValueError(f"not a decision: {decision!r}")
    status = {ONCE: Status.ONCE, ALWAYS: Status.ALWAYS, DENY: Status.DENIED}[decision]
    pending = ToolApproval.objects.filter(pk=approval_id, status=Status.PENDING)
    taken = pending.update(status=status)
    row = ToolApproval.objects.filter(pk=approval_id).first()
    if row is None:
        raise ApprovalGone(approval_id)
    if not taken:
        raise AlreadyAnswered(row)
    return row


def _create(session: Session, turn_id: str, call_id: str, tool: Listed, args: dict) -> dict:
    row = ToolApproval.objects.create(
        session=session,
        turn_id=turn_id,
        call_id=call_id,
        tool=tool.name,
        arguments=json.loads(json.dumps(args, default=str)),
        annotations=dict(tool.annotations),
    )
    return facts(row)


def _end(approval_id: int, status: str) -> ToolApproval | None:
    """An unanswered approval ends as `status` (stopped, expired); the row as it is now."""
    waiting = (Status.PENDING, Status.STOPPED)
    ToolApproval.objects.filter(pk=approval_id, status__in=waiting).update(status=status)
    return ToolApproval.objects.filter(pk=approval_id).first()


@database_sync_to_async
def _settled(approval_id: int) -> ToolApproval | None:
    row = ToolApproval.objects.filter(pk=approval_id).first()
    if row is None:
        return ToolApproval(pk=approval_id, status=Status.STOPPED)
    return None if row.status == Status.PENDING else row


@database_sync_to_async
def _stop(approval_id: int) -> object:
    return _end(approval_id, Status.STOPPED)


async def ask(
    session: Session,
    tool: Listed,
    args: dict,
    *,
    call: tuple[str, str, str],
    waits: ProposalWaits,
    waiting: Waiting,
) -> dict:
    """Show the card and wait for the person; the approval's facts once it is answered
    (or expired). `call` is (turn id, call id, the call as shown). Stop cancels the wait:
    the card says stopped and the cancel goes on."""
    turn_id, call_id, shown = call
    asked = await database_sync_to_async(_create)(session, turn_id, call_id, tool, args)
    await waiting(shown, asked)
    try:
        row = await asyncio.wait_for(waits.wait(asked["id"], _settled, _stop), wait_seconds())
    except TimeoutError:
        row = await database_sync_to_async(_end)(asked["id"], Status.EXPIRED)
    except asyncio.CancelledError:
        await asyncio.shield(waiting(shown, {**asked, "status": Status.STOPPED}))
        raise
    return facts(row) if row is not None else {**asked, "status": Status.STOPPED}


def told(tool: Listed, status: str) -> str:
    """What the model is told of a call the person did not let run."""
    if status == Status.DENIED:
        return f"denied by the person: {tool.name} was not run"
    if status == Status.EXPIRED:
        return (
            f"{tool.name} was not run: the person did not answer within {wait_seconds()} s "
            "(ask again if it is still needed)"
        )
    return f"{tool.name} was not run: the approval ended without an answer"
