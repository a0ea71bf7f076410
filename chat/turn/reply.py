"""The reply of a turn as it is written: saved while it streams, committed once at its end.

What is new is saved at least once a second, as a part beside the reply's row
(`history.stream.parts`), with the turn's lease renewed and a Stop from another worker
noticed; the row and its search index get the text once, at the end. The end stores how
the turn ended, records the exchange and the usage, and commits the session context with
the HUD figures (read from the breakdown the request's assembly made) in one transaction.
Non-goals: the streaming loop and the tool rounds (`chat.turn.turns`, `toolrounds`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.db import IntegrityError, transaction

from chat.repo.commands.runner import CommandRuns
from chat.session import SessionContext, hud, renew_lease
from chat.session.sets import sync_sets
from chat.session.working import ToolRef, assistant_history_text, is_recorded
from chat.turn import faults
from chat.turn.events import HudUpdate, ToolCallFinished, TurnEvent, TurnFinished, TurnNotice
from chat.turn.preparation.prepare import Prepared
from contextcore.llm import Usage
from history import services
from history.models import Message, PendingEdit, Session, StreamPart
from history.stream.parts import stream_append, streamed_texts

log = logging.getLogger(__name__)
Emit = Callable[[TurnEvent], Awaitable[None]]
SAVE_EVERY_SECONDS = 1.0
MAX_COMMIT_TRIES = 3


@dataclass
class Stream:
    """The reply as it streams: its text, how much of it is saved, its usage and cards."""

    text: str = ""
    message_id: str | None = None
    usage: Usage | None = None
    saved_at: float = 0.0
    stored: int = 0  # text[:stored] is saved as the reply's parts
    renewed_at: float = 0.0
    stop_asked: bool = False
    ended: bool = False  # the provider said the response was finished
    finish_reason: str | None = None
    tool_cards: list[ToolCallFinished] = field(default_factory=list)
    tool_refs: list[ToolRef] = field(default_factory=list)
    requests: int = 0  # the requests the turn sent and had answered (chat.turn.sending)
    last_prompt: int = 0  # the prompt tokens of the last of them

    def add_usage(self, usage: Usage) -> None:
        """Every round of a tool loop is billed: the turn's usage is their sum."""
        self.usage = usage if self.usage is None else self.usage + usage


@dataclass
class Turn:
    """One turn's own objects: where its events go, its session context, its request."""

    emit: Emit
    turn_id: str
    ctx: SessionContext
    user_text: str
    prepared: Prepared | None
    user_message_id: str
    # Whether the server is stopping (its turn host says): any ending is then `interrupted`.
    stopping: Callable[[], bool] = lambda: False
    # Who runs the model's commands (one at a time per session); the server hands in its own.
    commands: CommandRuns = field(default_factory=CommandRuns)
    # A page serves the turn: a proposed command waits for the answer there, and a
    # running command's output streams into its card.
    page_served: bool = False
    # MCP servers whose tools run without asking in this turn (`acdc chat --allow-mcp`).
    allow_mcp: frozenset[str] = frozenset()

    @property
    def session(self) -> Session:
        return self.ctx.session


async def end(turn: Turn, state: Stream, status: str, error: str) -> TurnFinished:
    """Store how the turn ended and commit its context, in one transaction; then tell the
    page. The lease is given back in the same commit."""
    notices = _ending_notices(state, status)
    stored, owner, message_id = True, turn.ctx.owner, state.message_id
    try:
        hud_data = await database_sync_to_async(_commit_with_retry)(
            turn, state, status, error, notices
        )
    except Exception as exc:
        # The answer must not be lost to a failing HUD or header: store it on its own.
        hud_data, fault = None, faults.fault_of(exc)
        # The commit is undone: the lease was not given back, no new row was made.
        turn.ctx.owner, state.message_id = owner, message_id
        if fault is None:
            log.exception("could not commit turn %s", turn.turn_id)
        stored = await _store_answer_alone(turn, state, status, error, fault)
        # After a fault, the turn host stores the ending again, lease and all, once the
        # disk or database is back: the lease may not be given back before then.
        stored = stored and fault is None
    for text in notices:
        await turn.emit(TurnNotice(turn.turn_id, text, "warning"))
    usage = state.usage.as_dict() if state.usage else {}
    if usage:  # what the status line says: each request's own count, and how many
        usage.update(requests=state.requests, last_prompt_tokens=state.last_prompt)
    tc = tuple(state.tool_cards)  # the tool calls' cards
    seen = turn.prepared.seen if turn.prepared is not None else None
    finished = TurnFinished(
        turn.turn_id, status, state.text, state.message_id, usage, error, tc, turn.user_text, seen
    )
    finished = replace(finished, stored=stored) if not stored else finished
    await turn.emit(finished)
    if hud_data is not None:
        await turn.emit(HudUpdate(turn.turn_id, hud_data))
    return finished


async def _store_answer_alone(turn: Turn, state: Stream, status, error, fault) -> bool:
    """The answer without the context's commit; False when a fault of the disk or the
    database refused it too (said in one line: the turn host stores it later)."""
    try:
        await database_sync_to_async(_store_answer)(turn, state, status, error)
    except Exception as exc:
        fault = faults.fault_of(exc)
        if fault is None:
            raise
        log.warning("turn %s: its ending waits to be stored: %s", turn.turn_id, fault.line())
        return False
    if fault is not None:
        log.warning("turn %s: stored without its context: %s", turn.turn_id, fault.line())
    return True


@transaction.atomic
def store_late(session_id: str, turn_id: str, finished: TurnFinished | None, error: str) -> None:
    """Store the ending a fault kept out of the store (`finished`, or with none only
    `error` for a reply left streaming) and give the turn's lease back: the session's
    next turn calls it first, once storage is back (raises while it is not)."""
    if finished is not None and finished.assistant_message_id:
        services.message_finish(
            message_id=finished.assistant_message_id,
            content=finished.text,
            status=finished.status,
            usage=finished.usage,
            error=finished.error,
        )
    elif finished is not None:
        session = Session.objects.get(pk=session_id)
        reply = services.message_append(
            session=session,
            role=Message.Role.ASSISTANT,
            content=finished.text,
            turn_id=turn_id,
            status=finished.status,
        )
        Message.objects.filter(pk=reply.pk).update(error=finished.error)
    streaming = Message.objects.filter(session_id=session_id, turn_id=turn_id, status="streaming")
    texts = streamed_texts(streaming.values_list("pk", flat=True))
    for pk, content in streaming.values_list("pk", "content"):  # its text as saved
        text = content + texts.get(pk, "")
        Message.objects.filter(pk=pk).update(content=text, status="error", error=error)
        StreamPart.objects.filter(message_id=pk).delete()
    Session.objects.filter(pk=session_id, turn_id=turn_id).update(
        turn_owner="", turn_id="", turn_expires=None
    )


def _ending_notices(state: Stream, status: str) -> list[str]:
    if status == "complete" and not state.text.strip() and not state.tool_cards:
        return ["The model sent an empty answer. Try again, or rephrase the question."]
    if status == "complete" and state.finish_reason == "length":
        return ["The answer reached the model's output limit and stops mid-way."]
    return []


def _commit_with_retry(turn: Turn, state: Stream, status: str, error: str, notices):
    """Another writer may take a message number this transaction wanted (a system note
    from another tab): the transaction is rolled back whole and tried again."""
    for _ in range(MAX_COMMIT_TRIES - 1):
        message_id = state.message_id
        try:
            return _commit_ending(turn, state, status, error, notices)
        except IntegrityError:
            state.message_id = message_id
            turn.ctx.reread_last_seq()
    return _commit_ending(turn, state, status, error, notices)


@transaction.atomic
def _commit_ending(turn: Turn, state: Stream, status: str, error: str, notices: list[str]):
    _store_answer(turn, state, status, error)
    for text in notices:
        turn.ctx.append(
            role=Message.Role.SYSTEM, content=text, turn_id=turn.turn_id, system_event=True
        )
    if turn.prepared is None:  # failed before the request was made
        turn.ctx.commit(release=True)
        return None
    return finish_turn(
        turn.ctx,
        turn.prepared,
        turn_id=turn.turn_id,
        user_text=turn.user_text,
        status=status,
        answer=state.text,
        usage=state.usage,
        ids=(turn.user_message_id, state.message_id or ""),
        toolcalls=state.tool_refs,
        requests=(state.requests, state.last_prompt),
    )


def _store_answer(turn: Turn, state: Stream, status: str, error: str) -> None:
    """The assistant row: made now when the reply was quick (no partial save yet), and
    always for a failure, so a reload shows the question answered by its error."""
    usage = state.usage.as_dict() if state.usage else {}
    turn.ctx.reply_text = state.text  # the after-turn work looks for edit blocks in it
    if state.message_id is None:
        _store_new_answer(turn, state, status, usage=usage, error=error)
    else:
        services.message_finish(
            message_id=state.message_id, content=state.text, status=status, usage=usage, error=error
        )
    if status != "complete" and turn.ctx.edit_calls:
        # No after-turn work follows a reply cut short: its edits are shown under it, to
        # be reviewed by the person (never applied by themselves).
        PendingEdit.objects.filter(turn_id=turn.turn_id, message=None).update(
            message_id=state.message_id
        )


def _store_new_answer(turn: Turn, state: Stream, status: str, **fields) -> None:
    fields.setdefault("content", state.text)
    message = turn.ctx.append(
        role=Message.Role.ASSISTANT,
        turn_id=turn.turn_id,
        status=status,
        model=turn.ctx.model,
        **fields,
    )
    state.message_id = message.id


def save_due(state: Stream) -> bool:
    """Whether `save_partial` would save now (a test, without a coroutine per chunk)."""
    return time.monotonic() - state.saved_at >= SAVE_EVERY_SECONDS


async def save_partial(turn: Turn, state: Stream) -> None:
    """At most once a second: the reply so far goes to the store (a crash loses at most
    the last second of what was shown), and the turn lease is renewed while it runs."""
    if not save_due(state):
        return
    state.saved_at = time.monotonic()
    await database_sync_to_async(_save_partial_rows)(turn, state)
    if state.stop_asked:
        raise asyncio.CancelledError  # as the Stop of a tab on this worker would


def _save_partial_rows(turn: Turn, state: Stream) -> None:
    """One commit: the row (first time, without text), the new text as a part, the lease."""
    end, message_id = len(state.text), state.message_id
    try:
        with transaction.atomic():
            if state.message_id is None:
                _store_new_answer(turn, state, Message.Status.STREAMING, content="")
            new = state.text[state.stored : end]
            stream_append(message_id=state.message_id, offset=state.stored, text=new)
            # Every save learns whether Stop was asked for from a tab on another worker; the
            # lease is extended every third of its time (writing the session row is not small).
            extend = time.monotonic() - state.renewed_at >= settings.ACDC_TURN_LEASE_SECONDS / 3
            renewed = renew_lease(turn.ctx.session_id, turn.ctx.owner, extend=extend)
    except BaseException:
        state.message_id = message_id  # the row it made is rolled back with the rest
        raise
    state.renewed_at = time.monotonic() if extend else state.renewed_at
    state.stored = end
    if not renewed:
        state.stop_asked = True


def finish_turn(
    ctx: SessionContext,
    prepared: Prepared,
    *,
    turn_id: str,
    user_text: str,
    status: str,
    answer: str,
    usage: Usage | None,
    ids: tuple[str, str],
    toolcalls: Sequence[ToolRef] = (),
    requests: tuple[int, int] = (0, 0),
) -> dict[str, Any]:
    """Record the exchange, the usage and the HUD figures, and commit them together with
    the engine state, giving the turn lease back; returns the HUD data.

    The turn's tool calls stay in history as `toolcall_ref` lines ahead of the answer;
    their outputs are objects in the session's sets, rendered only while active.
    `requests`: how many requests the turn sent, and the last one's prompt tokens."""
    manager = prepared.manager
    refs = tuple(toolcalls)
    if is_recorded(status, answer, len(refs)):
        manager.record_exchange(
            prepared.history_text or user_text, assistant_history_text(answer, refs), ids=ids
        )
    cost = hud.cost_of(usage, prepared.facts) if usage else None
    billed = usage.as_dict() if usage else {}
    services.token_usage_record(
        session_id=ctx.session_id,
        turn_id=turn_id,
        model=prepared.facts.name,
        sections=prepared.breakdown.get("sections", {}),
        tiers=prepared.breakdown.get("tiers", {}),
        estimated_prompt_tokens=prepared.estimated_tokens,
        usage=billed,
        cost=cost,
        related=prepared.related,
    )
    row = (billed.get("prompt_tokens", 0), billed.get("cache_read_tokens", 0), cost)
    # The HUD reads the breakdown the request's own assembly made, this exchange included;
    # when the model's tools changed the sets, it previews what they hold now.
    ctx.breakdown, ctx.relevance = prepared.breakdown, prepared.grounding_relevance
    if refs:
        held_before = manager.file_context.items()
        sync_sets(ctx.session, manager, ctx.maps, ctx.repository.indexed())
        if manager.file_context.items() != held_before:
            ctx.breakdown = None
    data = hud.figures(ctx, extra_usage=row, requests=requests)
    ctx.commit(hud=data, usage=row, release=True)
    return data
