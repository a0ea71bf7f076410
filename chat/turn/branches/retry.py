"""Retry: the newest exchange's failed, interrupted or stopped reply is written again.

Its exchange is set aside (kept in the store and in History, out of the working history, as
an edit's is) and its stored question is asked again, so the new reply takes the old one's
place. No note is added: nothing was edited or rolled back. Only the newest exchange: an
older question would otherwise be answered at the bottom, after the rest.
"""

from __future__ import annotations

from django.db import transaction

from chat.session import SessionBusy, SessionContext, SessionMissing, Wiring, held
from history.models import Message

# The replies that may be written again: they did not end complete.
RETRYABLE = (Message.Status.ERROR, Message.Status.INTERRUPTED, Message.Status.CANCELLED)
NOT_NEWEST = "Only the newest reply can be retried; send that message again instead."


class RetryRefused(Exception):
    """The exchange cannot be retried now; `str(exc)` is a message for the user."""


def set_aside_for_retry(session_id: str, turn_id: str, wiring: Wiring) -> str:
    """Set the newest exchange (turn `turn_id`) aside and return its question; refused
    unless its reply failed, was cut short or stopped, or while a reply is being written."""
    try:
        with held(session_id) as owner:
            return _set_aside(session_id, turn_id, owner, wiring)
    except SessionMissing:
        raise RetryRefused(f"There is no session {session_id!r}.") from None
    except SessionBusy:
        raise RetryRefused("A reply is being written: wait for it or press Stop.") from None


@transaction.atomic
def _set_aside(session_id: str, turn_id: str, owner: str, wiring: Wiring) -> str:
    live = Message.objects.filter(session_id=session_id, rolled_back=False)
    question = live.filter(role=Message.Role.USER, system_event=False).order_by("-seq").first()
    if question is None or not turn_id or question.turn_id != turn_id:
        raise RetryRefused(NOT_NEWEST)
    reply = live.filter(turn_id=turn_id, role=Message.Role.ASSISTANT).order_by("-seq").first()
    if reply is None or reply.status not in RETRYABLE:
        raise RetryRefused("That reply is complete; send a new message instead.")
    live.filter(seq__gte=question.seq).update(rolled_back=True)
    SessionContext.open(session_id, wiring, owner=owner).commit()  # the header follows the history
    return question.content
