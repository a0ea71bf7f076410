"""One chat turn, start to end, for the browser and the terminal alike.

Order: store the user message -> assemble the prompt -> stream -> store the assistant
message and usage -> save the context state -> maybe compact. A turn runs as one asyncio
task; cancelling it (Stop, disconnect) stores the partial answer as `cancelled`. Provider
errors store the partial answer as `error`. Nothing already shown to the user is lost:
the streaming row is saved at least once a second.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from channels.db import database_sync_to_async
from django.conf import settings
from django.db import transaction

from chat import context
from chat.events import (
    HudUpdate,
    TurnDelta,
    TurnEvent,
    TurnFinished,
    TurnNotice,
    TurnStarted,
)
from chat.runtime import chat_model, llm_client
from contextcore.llm import LLMClient, LLMError, LLMRequest, TextDelta, Usage, UsageReport
from history import services
from history.ids import new_turn_id
from history.images import ImageRejected, images_get, message_attach_images
from history.models import Message, Session

log = logging.getLogger(__name__)
Emit = Callable[[TurnEvent], Awaitable[None]]
SAVE_EVERY_SECONDS = 1.0


class TurnRejected(Exception):
    """The input cannot start a turn; `str(exc)` is a message for the user."""


@dataclass
class _Stream:
    text: str = ""
    message_id: str | None = None
    usage: Usage | None = None
    saved_at: float = 0.0


async def run_turn(
    *,
    session_id: str,
    user_text: str,
    emit: Emit,
    model: str = "",
    client: LLMClient | None = None,
    turn_id: str | None = None,
    images: Sequence[str] = (),
) -> TurnFinished:
    text = _validated(user_text)
    session = await _load_session(session_id)
    model = chat_model(model or session.model)
    turn_id = turn_id or new_turn_id()
    user_message = await _store_user_message(session, text, turn_id, model, tuple(images))
    await emit(
        TurnStarted(turn_id, session.id, user_message.id, text, model, session.title, tuple(images))
    )
    try:
        prepared = await context.prepare(
            session=session, user_text=text, model=model, turn_id=turn_id, images=tuple(images)
        )
    except LLMError as exc:
        return await _finish(emit, turn_id, session, _Stream(), "error", exc.user_message)
    for notice in prepared.notices:
        await emit(TurnNotice(turn_id, notice.text, notice.level, notice.paths))
    request = LLMRequest(model=model, messages=prepared.messages, metadata=prepared.metadata)
    turn = _Turn(emit, turn_id, session, text, prepared)
    return await _stream(turn, request, client or llm_client())


@dataclass
class _Turn:
    emit: Emit
    turn_id: str
    session: Session
    user_text: str
    prepared: context.Prepared


async def _stream(turn: _Turn, request: LLMRequest, client: LLMClient) -> TurnFinished:
    state = _Stream()
    try:
        async for event in client.stream(request):
            if isinstance(event, TextDelta) and event.text:
                state.text += event.text
                await _save_partial(state, turn.session, turn.turn_id, request.model)
                await turn.emit(TurnDelta(turn.turn_id, state.text))
            elif isinstance(event, UsageReport):
                state.usage = event.usage
    except asyncio.CancelledError:
        await asyncio.shield(_end(turn, state, "cancelled", ""))
        raise
    except LLMError as exc:
        log.warning("turn %s failed: %s %s", turn.turn_id, exc.user_message, exc.detail)
        return await _end(turn, state, "error", exc.user_message)
    return await _end(turn, state, "complete", "")


async def _end(turn: _Turn, state: _Stream, status: str, error: str) -> TurnFinished:
    finished = await _finish(turn.emit, turn.turn_id, turn.session, state, status, error)
    try:
        data = await context.after_turn(
            session=turn.session,
            prepared=turn.prepared,
            turn_id=turn.turn_id,
            user_text=turn.user_text,
            status=status,
            answer=state.text,
            usage=state.usage,
        )
    except Exception:
        # The answer is stored and shown; losing the HUD figures must not fail the turn.
        log.exception("could not record usage for turn %s", turn.turn_id)
    else:
        await turn.emit(HudUpdate(turn.turn_id, data))
    return finished


async def _finish(emit, turn_id, session, state: _Stream, status: str, error: str):
    usage = state.usage.as_dict() if state.usage else {}
    if state.message_id is None and (state.text or status == "complete"):
        await _create_assistant_message(state, session, turn_id, "")
    if state.message_id is not None:
        await database_sync_to_async(services.message_finish)(
            message_id=state.message_id,
            content=state.text,
            status=status,
            usage=usage,
            error=error,
        )
    finished = TurnFinished(turn_id, status, state.text, state.message_id, usage, error)
    await emit(finished)
    return finished


async def _save_partial(state: _Stream, session: Session, turn_id: str, model: str) -> None:
    if state.message_id is None:
        await _create_assistant_message(state, session, turn_id, model)
    now = time.monotonic()
    if now - state.saved_at >= SAVE_EVERY_SECONDS:
        state.saved_at = now
        await database_sync_to_async(services.message_update_stream)(
            message_id=state.message_id, content=state.text
        )


async def _create_assistant_message(state: _Stream, session, turn_id, model) -> None:
    message = await database_sync_to_async(services.message_append)(
        session=session,
        role=Message.Role.ASSISTANT,
        content=state.text,
        turn_id=turn_id,
        status=Message.Status.STREAMING,
        model=model,
    )
    state.message_id = message.id
    state.saved_at = time.monotonic()


def _validated(user_text: str) -> str:
    text = (user_text or "").strip()
    if not text:
        raise TurnRejected("The message is empty.")
    limit = settings.ACDC_MAX_MESSAGE_CHARS
    if len(text) > limit:
        raise TurnRejected(
            f"The message is too long ({len(text):,} characters; at most {limit:,})."
        )
    return text


@database_sync_to_async
def _load_session(session_id: str) -> Session:
    session = Session.objects.filter(pk=session_id).first()
    if session is None:
        raise TurnRejected(f"There is no session {session_id!r}.")
    return session


@database_sync_to_async
@transaction.atomic
def _store_user_message(
    session: Session, text: str, turn_id: str, model: str, images: tuple[str, ...]
) -> Message:
    try:
        attached = images_get(images)
    except ImageRejected as exc:
        raise TurnRejected(str(exc)) from None
    if session.model != model:
        session.model = model
        session.save(update_fields=["model"])
    message = services.message_append(
        session=session, role=Message.Role.USER, content=text, turn_id=turn_id, model=model
    )
    message_attach_images(message, attached)
    return message
