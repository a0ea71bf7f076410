"""A turn waiting for the person's answer to a command the model proposed.

`ProposalWaits` is the process's (its served object's `CommandRuns.answers`): a turn that a
page serves waits in `wait` until the proposal is settled (denied, or approved and its run
stored), and the view that answered calls `answered` to wake it at once. The waiter also
looks at the row every `POLL_SECONDS`, so an answer given on another worker reaches it too.
The turn's Stop cancels the wait; the caller marks the proposal stopped. Nothing waits in
the terminal: a turn handed no waits leaves the proposal pending.
"""

from __future__ import annotations

import asyncio
import contextlib

from channels.db import database_sync_to_async

from history.models import CommandProposal, CommandRun

POLL_SECONDS = 1.0
Status = CommandProposal.Status


class ProposalWaits:
    """The proposals turns of this process wait on, each with the event that wakes it."""

    def __init__(self, poll: float = POLL_SECONDS) -> None:
        self._events: dict[int, asyncio.Event] = {}
        self._poll = poll

    def waiting(self, proposal_id: int) -> bool:
        return proposal_id in self._events

    def answered(self, proposal_id: int) -> None:
        """The person's answer is stored (and its run ended): wake the turn waiting on it."""
        event = self._events.get(proposal_id)
        if event is not None:
            event.set()

    async def wait(self, proposal_id: int) -> CommandProposal:
        """The proposal once settled, its run loaded. Cancelled by Stop: the proposal, if
        still unanswered, is stopped, and the cancel goes on."""
        event = self._events.setdefault(proposal_id, asyncio.Event())
        try:
            while (row := await _settled(proposal_id)) is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), self._poll)
                event.clear()
            return row
        except asyncio.CancelledError:
            await asyncio.shield(database_sync_to_async(stop)(proposal_id))
            raise
        finally:
            self._events.pop(proposal_id, None)


def stop(proposal_id: int) -> bool:
    """The proposal, unanswered, ends as stopped (its turn was stopped): nothing runs."""
    pending = CommandProposal.objects.filter(pk=proposal_id, status=Status.PENDING)
    return bool(pending.update(status=Status.STOPPED))


def proposal_facts(row: CommandProposal) -> dict:
    """What the card and the turn know of a proposal: id, argv, reason, status, and how
    its run ended (`run`, when one did)."""
    facts = {"id": row.pk, "argv": row.argv, "reason": row.reason, "status": row.status}
    if row.run is not None:
        facts["run"] = run_facts(row.run)
    return facts


def run_facts(run: CommandRun) -> dict:
    seconds = run.duration_ms / 1000
    if run.ending == "timeout":
        ended = f"killed at its timeout after {seconds:.1f} s"
    elif run.ending == "failed":
        ended = "did not start"
    elif run.exit_code is not None and run.exit_code < 0:
        ended = f"killed by signal {-run.exit_code} after {seconds:.1f} s"
    else:
        ended = f"exit {run.exit_code} after {seconds:.1f} s"
    return {
        "name": run.name,
        "passed": run.ending == "exited" and run.exit_code == 0,
        "ended": ended,
        "sandboxed": run.sandboxed,
        "output": run.output,
    }


@database_sync_to_async
def _settled(proposal_id: int) -> CommandProposal | None:
    row = CommandProposal.objects.select_related("run").filter(pk=proposal_id).first()
    if row is None:
        return CommandProposal(pk=proposal_id, status=Status.STOPPED, argv=[])
    if row.status == Status.PENDING or (row.status == Status.APPROVED and row.run is None):
        return None
    return row
