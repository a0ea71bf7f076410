"""A turn waiting for the person's answer to a command the model proposed.

`ProposalWaits` is the process's (its served object's `CommandRuns.answers`): a turn that a
page serves waits in `wait` until the proposal is settled (denied, or approved and its run
stored), and the view that answered calls `answered` to wake it at once. The waiter also
asks the store every `POLL_SECONDS`, so an answer given on another worker reaches it too.
The turn's Stop cancels the wait and the proposal is stopped. Nothing waits in the
terminal: a turn handed no waits leaves the proposal pending. No ORM here (the runner
imports it before Django is set up): how a proposal is read and stopped is handed in.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

POLL_SECONDS = 1.0
Settled = Callable[[int], Awaitable[Any]]
Stop = Callable[[int], Awaitable[object]]


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

    async def wait(self, proposal_id: int, settled: Settled, stop: Stop) -> Any:
        """What `settled` says once the proposal is answered. Cancelled by Stop: `stop`
        ends the proposal if still unanswered, and the cancel goes on."""
        event = self._events.setdefault(proposal_id, asyncio.Event())
        try:
            while (row := await settled(proposal_id)) is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), self._poll)
                event.clear()
            return row
        except asyncio.CancelledError:
            await asyncio.shield(stop(proposal_id))
            raise
        finally:
            self._events.pop(proposal_id, None)
