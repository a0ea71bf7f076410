"""What a message asks of the session before its turn runs, for every kind of turn.

A plain send asks nothing. Regenerate and Edit make a new version of an earlier exchange
(`branch`), Retry sets a failed exchange aside and asks its question again (`retry`), and
Edit & resend of the last exchange sets it aside first (`replaces`). `open_kind` does that
work and says what the turn then sends; `run_message` is the one entry point a message
goes through whatever its kind: the kind's work, the redraw it asks of the tabs, the turn,
and the version switcher (or the version it replaced, back when the turn was refused). A
refusal of any kind is a `TurnRejected` with its reason.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from channels.db import database_sync_to_async

from chat.repo.mentions import Mention
from chat.session import Wiring
from chat.session.checkpoints import RollbackRefused, set_aside_last
from chat.turn.branches.retry import RetryRefused, set_aside_for_retry
from chat.turn.branches.versions import BranchRefused, answered_or_restored, branch_out
from chat.turn.turns import TurnInput, TurnRejected, TurnServices, run_turn
from history.ids import new_turn_id

# Told what the tabs must draw again: "conversation", or "retry" with the retried message.
Redraw = Callable[[str, str], Awaitable[None]]


@dataclass(frozen=True)
class TurnKind:
    """Which kind of turn a message starts: at most one of the three ids is set."""

    branch: str = ""  # the message a new version is made of (Regenerate, Edit)
    retry: str = ""  # the failed exchange's message, asked again
    replaces: str = ""  # the last exchange, set aside before the edited message is sent


@dataclass(frozen=True)
class Opening:
    """What the turn sends once the kind's work is done, and what the tabs redraw first."""

    user_text: str
    images: tuple[str, ...]
    alt_of: str = ""  # the message this turn's reply is a new version of
    chips: tuple[dict, ...] = ()  # Regenerate: the question's mentions, shown again
    redraw: Literal["", "conversation", "retry"] = ""


def open_kind(
    session_id: str, kind: TurnKind, text: str, images: tuple[str, ...], wiring: Wiring
) -> Opening:
    try:
        if kind.branch:
            branched = branch_out(session_id, kind.branch, wiring)
            if branched.question:  # Regenerate: the same question, with its images
                text, images = branched.question, tuple(branched.images)
            return Opening(text, images, branched.root, tuple(branched.mentions), "conversation")
        if kind.retry:
            return Opening(
                set_aside_for_retry(session_id, kind.retry, wiring), images, redraw="retry"
            )
        if kind.replaces:
            set_aside_last(session_id, kind.replaces, wiring)
            return Opening(text, images, redraw="conversation")
    except (BranchRefused, RetryRefused, RollbackRefused) as exc:
        raise TurnRejected(str(exc)) from None
    return Opening(text, images)


@dataclass(frozen=True)
class SentMessage:
    """A message as a tab or the terminal sent it, with the kind of turn it starts."""

    text: str
    kind: TurnKind = TurnKind()
    images: tuple[str, ...] = ()
    model: str = ""
    mentions: Sequence[Mention] = ()
    apply: bool = False  # its reply's edits apply when it ends (`acdc chat --apply`)


async def run_message(
    session_id: str, message: SentMessage, redraw: Redraw, services: TurnServices, turn_id: str = ""
) -> None:
    """Every kind of turn, the same way: the kind's work (in a thread), what the tabs draw
    again, the turn (with what the process serves: `services`), then the switcher of a
    new version."""
    wiring = services.wiring
    opening = await database_sync_to_async(open_kind)(
        session_id, message.kind, message.text, message.images, wiring
    )
    if opening.redraw:
        await redraw(opening.redraw, message.kind.retry)
    turn_id = turn_id or new_turn_id()
    sent = TurnInput(
        session_id,
        opening.user_text,
        model=message.model,
        images=opening.images,
        mentions=message.mentions,
        alt_of=opening.alt_of,
        turn_id=turn_id,
        apply_now=message.apply,
    )
    try:
        await run_turn(sent, services)
    finally:
        if opening.alt_of:
            await database_sync_to_async(answered_or_restored)(
                session_id, opening.alt_of, turn_id, wiring, opening.chips
            )
            await redraw("conversation", "")
