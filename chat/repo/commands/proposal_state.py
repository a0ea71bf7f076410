"""A proposal as the waiting turn and its card read it from the store.

`settled` is the proposal once answered (denied, stopped, or approved with its run
stored), else None; `stop` ends an unanswered one as stopped (its turn was stopped);
`proposal_facts` is what the card and the turn know of it. `argv_digest` names one exact
argv: the card carries the digest of the argv it shows, and an approval runs only when the
row's argv still has it (`answering`). The waiting itself is `waits.ProposalWaits`'.
Synchronous ORM code but `settled`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from channels.db import database_sync_to_async

from history.models import CommandProposal, CommandRun

Status = CommandProposal.Status


def stop(proposal_id: int) -> bool:
    """The proposal, unanswered, ends as stopped (its turn was stopped): nothing runs."""
    pending = CommandProposal.objects.filter(pk=proposal_id, status=Status.PENDING)
    return bool(pending.update(status=Status.STOPPED))


def argv_digest(argv: Sequence[str]) -> str:
    """The SHA-256 of the exact argv, item by item (JSON, so no two argvs share one)."""
    exact = json.dumps(list(argv), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(exact.encode("utf-8", "surrogatepass")).hexdigest()


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
    elif run.ending == "stopped":
        ended = f"stopped with Stop after {seconds:.1f} s"
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
def settled(proposal_id: int) -> CommandProposal | None:
    row = CommandProposal.objects.select_related("run").filter(pk=proposal_id).first()
    if row is None:
        return CommandProposal(pk=proposal_id, status=Status.STOPPED, argv=[])
    if row.status == Status.PENDING or (row.status == Status.APPROVED and row.run is None):
        return None
    return row
