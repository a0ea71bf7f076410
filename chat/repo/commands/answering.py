"""The person's answer to a proposal: Run once, Always allow this exact command, or Deny.

A proposal is answered once: `claim` moves the pending row to its answer in one conditional
update, so a second tab or a double click finds it answered (`AlreadyAnswered`) and nothing
runs twice; a proposal deleted with its session is `ProposalGone`. An approval names the
argv the person was shown (its `argv_digest`, carried by the card): when the row's argv is
not that one, the claim is undone and nothing runs (`ProposalChanged`), and a row whose argv
changed after the claim runs nothing either (its run is stored as not started). Run once
runs the exact argv the model proposed through the caller's `CommandRuns` (sandboxed where
bubblewrap is, at the repository root, the session's secret floor masked, the default
timeout); Always allow first declares that exact argv under a name derived from it
(`declared_name`; an identical declaration is reused), so later `run_command` calls find
it, then runs it the same way. Deny runs nothing. A run is stored as a `CommandRun` tied
to the proposal. Non-goals: drawing the card (`chat.web.proposals`), telling the model.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from pathlib import Path

from channels.db import database_sync_to_async
from django.db import transaction

from chat.repo.commands import declaring
from chat.repo.commands.model_tools import store_run
from chat.repo.commands.output import Captured
from chat.repo.commands.proposal_state import argv_digest
from chat.repo.commands.runner import CommandRuns, OnOutput, RunOutcome
from history.models import CommandProposal, CommandRun
from history.models.declared import DEFAULT_TIMEOUT_SECONDS

ONCE, ALWAYS, DENY = "once", "always", "deny"
DECISIONS = (ONCE, ALWAYS, DENY)
Status = CommandProposal.Status
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
CHANGED_AFTER = "nothing ran: the proposal's command changed after it was approved"


class ProposalGone(LookupError):
    """The proposal is not there (deleted with its session, or never was)."""


class AlreadyAnswered(Exception):
    """Someone answered first; `proposal` is the row as it is now."""

    def __init__(self, proposal: CommandProposal) -> None:
        super().__init__(f"proposal {proposal.pk} was already answered: {proposal.status}")
        self.proposal = proposal


class ProposalChanged(Exception):
    """The argv is not the one the person approved; `proposal` is the row, still pending."""

    def __init__(self, proposal: CommandProposal) -> None:
        super().__init__(f"proposal {proposal.pk}: its argv is not the one shown")
        self.proposal = proposal


def load(proposal_id: int) -> CommandProposal:
    row = CommandProposal.objects.select_related("session", "run").filter(pk=proposal_id).first()
    if row is None:
        raise ProposalGone(proposal_id)
    return row


def claim(proposal_id: int, decision: str, shown: str = "") -> CommandProposal:
    """The pending proposal, moved to `decision`'s status; raises when it is not pending,
    or, for an approval, when its argv's digest is not `shown` (the claim is undone)."""
    if decision not in DECISIONS:
        raise ValueError(f"not a decision: {decision!r}")
    status = Status.DENIED if decision == DENY else Status.APPROVED
    with transaction.atomic():  # the update holds the row: its argv cannot change under us
        taken = CommandProposal.objects.filter(pk=proposal_id, status=Status.PENDING).update(
            status=status
        )
        row = load(proposal_id)
        if taken and decision != DENY and argv_digest(row.argv) != shown:
            row.status = Status.PENDING
            raise ProposalChanged(row)
    if not taken:
        raise AlreadyAnswered(row)
    return row


def declared_name(argv: Sequence[str], taken: set[str]) -> str:
    """A command name for `argv` that `taken` does not hold: its program and first words
    (`python -m pytest -q` -> `python-m-pytest`), then -2, -3… when needed."""
    words = [posixpath.basename(argv[0]), *argv[1:]] if argv else []
    kept = [m.group(0) for w in words[:4] if (m := _WORD.search(w.lstrip("-")))][:3]
    base = "-".join(kept)[:34].rstrip("-.") or "command"
    name, number = base, 2
    while name in taken:
        name, number = f"{base}-{number}", number + 1
    return name


def declare(repository: str, argv: Sequence[str]) -> declaring.Declared:
    """The declaration of exactly `argv` (an existing one when the person made it before)."""
    existing = declaring.declared(repository)
    same = next((d for d in existing if d.argv == tuple(argv)), None)
    if same is not None:
        return same
    name = declared_name(argv, {d.name for d in existing})
    return declaring.add(repository, name, argv)


async def run_approved(
    proposal: CommandProposal,
    runs: CommandRuns,
    *,
    root: Path,
    declared: declaring.Declared | None = None,
    on_output: OnOutput | None = None,
) -> CommandRun:
    """Run the approved proposal's argv (with the terms of its declaration when Always
    allow made one: `declared`), store the run and tie it to the proposal."""
    name, timeout, network = "", DEFAULT_TIMEOUT_SECONDS, False
    if declared is not None:
        name, timeout, network = declared.name, declared.timeout_seconds, declared.network
    if not await database_sync_to_async(_unchanged)(proposal):
        return await database_sync_to_async(_stored)(proposal, name, _not_run(proposal))
    outcome = await runs.run(
        proposal.session_id,
        list(proposal.argv),
        root=root.resolve(),
        timeout=timeout,
        network=network,
        floor=tuple(proposal.session.secret_floor or ()),
        on_output=on_output,
    )
    return await database_sync_to_async(_stored)(proposal, name, outcome)


def _unchanged(proposal: CommandProposal) -> bool:
    """The row's argv is still the one claimed (and run below)."""
    now = CommandProposal.objects.filter(pk=proposal.pk).values_list("argv", flat=True)
    return list(now) == [list(proposal.argv)]


def _not_run(proposal: CommandProposal) -> RunOutcome:
    said = Captured()
    said.add(CHANGED_AFTER.encode())
    return RunOutcome(tuple(proposal.argv), "failed", None, 0.0, said, True, CHANGED_AFTER)


def _stored(proposal: CommandProposal, name: str, outcome) -> CommandRun:
    run = store_run(proposal.session, proposal.turn_id, name, outcome)
    CommandProposal.objects.filter(pk=proposal.pk).update(run=run)
    proposal.run = run
    return run
