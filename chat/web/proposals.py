"""A command the model proposed, as its card shows it: the exact argv, the reason, the answer.

The card sits inside the tool card of the call that proposed it (`chat/_proposal.html`),
in the live reply and in the page drawn from the store alike. The argv is one line as a
shell would quote it, with what runs text as code named (`declaring.code_kind`: a shell,
`python -c`, through env, timeout, xargs, find -exec…), and every character a reader
cannot see drawn as a marked escape (`\u202e`, a line break as `⏎`; the reason too),
because an approval is of that exact argv and nothing like it: the form sends the digest
of the argv it shows, and an argv changed since runs nothing. A pending card
offers Run once, Always allow this exact command, and Deny; an answered one says the answer,
the name Always allow declared, and how the run ended with the end of its output.
"""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string

from chat.repo.commands import declaring
from chat.repo.commands.proposal_state import argv_digest, proposal_facts
from contextcore.controls import visible_parts
from history.models import CommandProposal

OUTPUT_SHOWN_CHARS = 4000


def shown(facts: dict[str, Any], note: str = "") -> dict:
    """The card's fields from the proposal's `facts` (`waiting.proposal_facts`)."""
    argv = [str(a) for a in facts.get("argv") or []]
    run = dict(facts["run"]) if facts.get("run") else None
    if run is not None:
        output = run["output"]
        run["output"] = output[-OUTPUT_SHOWN_CHARS:]
        run["cut"] = max(0, len(output) - OUTPUT_SHOWN_CHARS)
    return {
        "id": facts["id"],
        "parts": declaring.shown_parts(argv),
        "digest": argv_digest(argv),
        "kind": declaring.code_kind(argv),
        "reason": visible_parts(facts.get("reason", "")),
        "status": facts.get("status", CommandProposal.Status.PENDING),
        "run": run,
        "note": note,
    }


def of_row(row: CommandProposal, note: str = "") -> dict:
    return shown(proposal_facts(row), note)


def of_id(proposal_id: object) -> dict | None:
    """The card's fields of a stored proposal, or None when it is gone."""
    if not isinstance(proposal_id, int):
        return None
    row = CommandProposal.objects.select_related("run").filter(pk=proposal_id).first()
    return of_row(row) if row is not None else None


def render(fields: dict, *, oob: bool = False) -> str:
    return render_to_string("chat/_proposal.html", {"proposal": fields, "oob": oob})


def render_gone(text: str) -> str:
    """The answer to a button of a proposal that is no longer there."""
    return render_to_string("chat/_proposal_gone.html", {"text": text})
