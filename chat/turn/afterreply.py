"""Everything after the reply, for the page and the terminal alike: `AfterReply`.

Once a turn's reply is stored and delivered, and before the session's lease is given back,
the turn's `AfterReply` runs, in one order: the reply's edits stored (and applied under
Auto-apply or `--apply`), the due checkpoint, then compaction or the automatic rollback
(`chat.turn.after_turn`); the reply's edits shown; the check after applying when one is due
(`chat.turn.checking`), and its one fix round decided. The fix round is a message of the
session (`SentMessage`: acdc's words with the check's cut output), kept in `fix` for
whoever runs the session's turns to send next: the turn host first in the session's queue,
`acdc chat` right after the turn. The check Accept all asked for goes through `check` alone.

How each step is shown is the surface's (`Surface`): the page broadcasts frames, the
terminal prints lines, `acdc chat` through the server hears events. Which rounds are fix
rounds is the history's (`CheckRun.sends_back`), unless the surface counts its own
(`fixes`: `acdc chat`, whose exit status is the last run's).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from chat.repo import edittools
from chat.repo.commands.runner import CommandRuns
from chat.repo.served_repo import ServedRepository
from chat.session import SessionContext
from chat.turn.after_turn import after_turn_tasks
from chat.turn.branches.kinds import SentMessage
from chat.turn.checking import CheckRun, after_apply
from chat.turn.events import SessionEvent


class Surface(Protocol):
    """Where what happens after the reply is shown: a page's tabs, or a terminal."""

    async def report(self, event: SessionEvent) -> None:
        """Compaction started or ended, an automatic rollback."""

    async def edits(self, session_id: str, turn_id: str) -> int:
        """The reply's edits, shown once they are stored; 0 lets the check run."""

    async def checked(self, session_id: str, ran: CheckRun) -> None:
        """The check ran after the edits applied."""


@dataclass
class AfterReply:
    """The turn's end, decided once: the `after` a turn's services hand `run_turn`."""

    surface: Surface
    turn_id: str  # the turn whose reply this ends
    runs: CommandRuns  # the session's check runs here, as the model's commands do
    repository: ServedRepository
    model: str = ""  # the model the person chose (the fix round asks it too)
    check: str | None = ""  # "": the session's check; a name: `--check NAME`; None: none
    fixes: int | None = None  # fix rounds left, when the surface counts its own
    start_delay: float | None = None  # before "Compacting…" (a terminal has no flicker: 0)
    ran: CheckRun | None = field(default=None, init=False)  # the check's last run, if any
    fix: SentMessage | None = field(default=None, init=False)  # the one fix round, if due

    async def __call__(self, ctx: SessionContext) -> None:
        await after_turn_tasks(ctx, self.surface.report, start_delay=self.start_delay)
        if not edittools.enabled():
            return
        shown = await self.surface.edits(ctx.session_id, self.turn_id)
        if shown == 0 and self.check is not None:
            await self.checked(ctx.session_id, self.turn_id, apply=ctx.apply_now)

    async def checked(self, session_id: str, turn_id: str, *, apply: bool = False) -> None:
        """The check after the turn `turn_id` when one is due, shown; `fix` set when its
        failure goes back to the model (the fix round applies as the turn did)."""
        asked = self.check or ""
        repo = self.repository.indexed()
        ran = await after_apply(session_id, turn_id, runs=self.runs, repo=repo, asked=asked)
        if ran is None:
            return
        self.ran = ran
        await self.surface.checked(session_id, ran)
        if self._goes_back(ran):
            self.fix = SentMessage(ran.fix_request(), model=self.model, apply=apply)

    def _goes_back(self, ran: CheckRun) -> bool:
        """Whether the run's failure goes back to the model: the history says whether the
        turn was the fix round, unless the surface counts its own rounds (`acdc chat`)."""
        if self.fixes is None:
            return ran.sends_back
        return not ran.passed and self.fixes > 0
