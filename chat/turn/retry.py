"""Retry: the newest exchange's failed, interrupted or stopped reply is written again.

`set_aside_for_retry` sets that exchange aside (the question, its reply, its tool calls:
kept in the store and in History, out of the working history, as an edit does) and returns
the question, which the caller sends again as the new last message, so the retried reply
takes the failed one's place. No note is added: nothing was edited or rolled back. Only the
newest exchange can be retried: an older reply's question would otherwise be answered
again at the bottom, after everything that followed it.
Non-goals: running the turn (`chat.turn.turns`), the page (`chat.web`).
"""

from __future__ import annotations

from django.db import transaction

from chat.turn.session import SessionBusy, SessionContext, SessionMissing, held
from history.models import Message

RETRYABLE = (Message.Status.ERROR, Message.Status.INTERRUPTED, Message.Status.CANCELLED)
NOT_NEWEST = "Only the newest reply can be retried; send that message again instead."


class RetryRefused(Exception):
    """The exchange cannot be retried now; `str(exc)` is a message for the user."""


def set_aside_for_retry(session_id: str, turn_id: str) -> str:
    """Set the newest exchange (turn `turn_id`) aside and return its question; refused
    unless its reply failed, was cut short or stopped, or while a reply is being written."""
    try:
        with held(session_id) as owner:
            return _set_aside(session_id, turn_id, owner)
    except SessionMissing:
        raise RetryRefused(f"There is no session {session_id!r}.") from None
    except SessionBusy:
        raise RetryRefused("A reply is being written: wait for it or press Stop.") from None


@transaction.atomic
def _set_aside(session_id: str, turn_id: str, owner: str) -> str:
    live = Message.objects.filter(session_id=session_id, rolled_back=False)
    question = live.filter(role=Message.Role.USER, system_event=False).order_by("-seq").first()
    if question is None or not turn_id or question.turn_id != turn_id:
        raise RetryRefused(NOT_NEWEST)
    reply = live.filter(turn_id=turn_id, role=Message.Role.ASSISTANT).order_by("-seq").first()
    if reply is None or reply.status not in RETRYABLE:
        raise RetryRefused("That reply is complete; send a new message instead.")
    live.filter(seq__gte=question.seq).update(rolled_back=True)
    SessionContext.open(session_id, owner=owner).commit()  # the header follows the history
    return question.content


def retried_ids(rows: list[Message]) -> set[str]:
    """The ids of set-aside exchanges that a Retry replaced: a set-aside question whose
    reply did not complete, followed by the same question, in the working history or
    itself retried (a reply retried twice)."""
    users = [m for m in rows if m.role == Message.Role.USER and not m.system_event]
    status = {m.turn_id: m.status for m in rows if m.role == Message.Role.ASSISTANT}
    turns: set[str] = set()
    for question, after in reversed(list(zip(users, users[1:], strict=False))):
        followed = not after.rolled_back or after.turn_id in turns
        retried = question.rolled_back and status.get(question.turn_id) in RETRYABLE
        if retried and followed and after.content == question.content:
            turns.add(question.turn_id)
    return {m.id for m in rows if m.turn_id and m.turn_id in turns}
