"""The person's answer to a command the model proposed: Run once, Always allow, Deny.

One POST per answer (`decision` = once | always | deny, `argv` = the digest of the argv the
card showed). The answer is claimed once (`chat.repo.commands.answering`): a second tab or
a double click is told who was first and nothing runs again; an approval of an argv that is
not the row's any more runs nothing and draws the card again as it is now; a proposal
deleted with its session is a plain message, never a 500. An approval runs the exact argv
through the served object's `CommandRuns` (sandboxed, one run per session, killed at its
timeout); the view answers when the run has ended. Every tab of the session sees the card
change (approved and running, then the result) through its channel group; the pressing tab
also gets the card as the answer.
"""

from __future__ import annotations

from types import MappingProxyType

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.apps import apps
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_POST

from chat.repo.commands import answering
from chat.web import proposals
from chat.web.broadcast import session_group
from chat.web.params import MAX_ID, BadNumber, whole_number

GONE = "This proposal is no longer there (its session was deleted): nothing ran."
UNKNOWN = "The answer is one of: Run once, Always allow this exact command, Deny."
DENIED_FIRST = "It was already denied (in another tab, or by an earlier click): nothing ran."
STOPPED_FIRST = "Its turn was stopped before an answer came: nothing ran."
CHANGED = (
    "The command changed after this card was drawn: nothing ran. This is the command as it "
    "is now; answer again if you want it."
)
APPROVED_FIRST = (
    "It was already approved (in another tab, or by an earlier click): it runs once, not again."
)

FIRST = MappingProxyType({"denied": DENIED_FIRST, "stopped": STOPPED_FIRST})


@require_POST
async def proposal_answer(request: HttpRequest, proposal_id: str) -> HttpResponse:
    try:
        number = whole_number(proposal_id, what="The proposal", low=1, high=MAX_ID)
    except BadNumber as exc:
        return _gone(str(exc), 400)
    decision = request.POST.get("decision", "")
    if decision not in answering.DECISIONS:
        return _gone(UNKNOWN, 400)
    try:
        shown = request.POST.get("argv", "")
        row = await database_sync_to_async(answering.claim)(number, decision, shown)
    except answering.ProposalGone:
        return _gone(GONE, 404)
    except answering.ProposalChanged as exc:
        fields = await database_sync_to_async(proposals.of_row)(exc.proposal, CHANGED)
        return HttpResponse(proposals.render(fields), status=409)
    except answering.AlreadyAnswered as exc:
        first = FIRST.get(exc.proposal.status, APPROVED_FIRST)
        fields = await database_sync_to_async(proposals.of_row)(exc.proposal, first)
        return HttpResponse(proposals.render(fields), status=409)
    if decision != answering.DENY:
        root = apps.get_app_config("chat").served.repository.root
        declared = None
        if decision == answering.ALWAYS:
            declared = await database_sync_to_async(answering.declare)(str(root), row.argv)
        await _tell(row.session_id, proposals.render(proposals.of_row(row), oob=True))
        runs = apps.get_app_config("chat").served.commands
        await answering.run_approved(row, runs, root=root, declared=declared)
    apps.get_app_config("chat").served.commands.answers.answered(row.pk)  # a turn waits?
    fields = proposals.of_row(row)  # the run is on the row already: no query
    await _tell(row.session_id, proposals.render(fields, oob=True))
    return HttpResponse(proposals.render(fields))


async def _tell(session_id: str, html: str) -> None:
    """Every tab of the session draws the card as it is now (approved and running, then
    how it ended)."""
    message = {"type": "chat.frame", "html": html}
    await get_channel_layer().group_send(session_group(session_id), message)


def _gone(text: str, status: int) -> HttpResponse:
    return HttpResponse(proposals.render_gone(text), status=status)
