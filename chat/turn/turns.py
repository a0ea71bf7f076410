"""One chat turn, start to end, for the browser and the terminal alike.

Order: store the user message -> assemble the prompt -> stream -> store the assistant
message and usage -> save the context state -> maybe compact. A turn runs as one asyncio
task; cancelling it (Stop) stores the partial answer as `cancelled`, and once the server is
stopping (`begin_shutdown`) any ending is `interrupted`. Provider errors, and any fault
nobody foresaw, store the partial answer as `error`. Nothing already shown to the user is
lost: what is new is saved at least once a second, as a part beside the reply's row
(`history.stream.parts`); the row and its search index get the text once, at the end.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from channels.db import database_sync_to_async
from django.conf import settings
from django.db import IntegrityError, OperationalError, transaction

from acdc import dbfaults
from chat.llm.runtime import llm_client
from chat.repo.edits.replies import retry_request
from chat.repo.mentions import Mention, MentionRefused, checked
from chat.repo.repomap import engine as repomap_engine
from chat.repo.tools import ToolCall
from chat.turn import context, outgoing, toolrounds
from chat.turn.events import (
    HudUpdate,
    ToolCallFinished,
    TurnDelta,
    TurnEvent,
    TurnFinished,
    TurnNotice,
    TurnRetrying,
    TurnStarted,
)
from chat.turn.session import SessionBusy, SessionContext, SessionMissing, renew_lease
from contextcore.llm import (
    LLMClient,
    LLMError,
    LLMRequest,
    Retrying,
    StreamEnd,
    TextDelta,
    ToolCallDelta,
    Usage,
    UsageReport,
)
from history import services
from history.ids import new_turn_id
from history.images import ImageRejected, images_get, message_attach_images
from history.models import Image, Message, Session
from history.stream.parts import stream_append

log = logging.getLogger(__name__)
Emit = Callable[[TurnEvent], Awaitable[None]]
AfterReply = Callable[[SessionContext], Awaitable[object]]
SAVE_EVERY_SECONDS = 1.0
MAX_COMMIT_TRIES = 3
_retry = database_sync_to_async(retry_request)  # the reply's failed edit blocks, asked again
# Set once the server stops: whatever then ends a turn (even a provider error) interrupts it.
_STOPPING = threading.Event()
FAILED = "Something went wrong on the server, so the turn stopped (the log has the details)"
CLOSED_EARLY = "The provider closed the stream early: the answer may be cut short."


class TurnRejected(Exception):
    """The input cannot start a turn; `str(exc)` is a message for the user."""


def locked_notice(session_id: str, user_text: str, since: datetime) -> str:
    """What the tab is told when another program's lock on the database stopped work on
    its message: whether the message was stored by then decides (reads go on under
    another program's write lock in WAL mode)."""
    text = (user_text or "").replace("\0", "").strip()
    mine = Message.objects.filter(session_id=session_id, role=Message.Role.USER, content=text)
    try:
        sent = mine.filter(timestamp__gte=since).exists()
    except OperationalError:
        sent = False
    return dbfaults.locked_turn_message(sent=sent)


@dataclass
class _Stream:
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
    tool_refs: list[context.ToolRef] = field(default_factory=list)

    def add_usage(self, usage: Usage) -> None:
        """Every round of a tool loop is billed: the turn's usage is their sum."""
        self.usage = usage if self.usage is None else self.usage + usage


async def run_turn(
    *,
    session_id: str,
    user_text: str,
    emit: Emit,
    model: str = "",
    client: LLMClient | None = None,
    turn_id: str | None = None,
    images: Sequence[str] = (),
    after: AfterReply | None = None,
    mentions: Sequence[Mention] = (),
    alt_of: str = "",  # the message is a new version of this one (Regenerate, Edit)
) -> TurnFinished:
    """One turn under the session's lease: refused (`TurnRejected`) while another turn
    runs in the session, in any tab or worker. `after` runs once the reply is delivered,
    with the turn's context, before the lease is given back."""
    text = _validated(user_text)
    turn_id = turn_id or new_turn_id()
    ctx = await _open(session_id, turn_id, text, model)
    try:
        attached = (tuple(images), tuple(mentions), alt_of)
        return await _run(ctx, text, turn_id, attached, emit, client, after)
    finally:
        if ctx.owner:
            await database_sync_to_async(_release)(ctx)


async def _open(session_id: str, turn_id: str, text: str, model: str) -> SessionContext:
    try:
        return await database_sync_to_async(context.open_turn)(session_id, turn_id, text, model)
    except SessionMissing:
        raise TurnRejected(f"There is no session {session_id!r}.") from None
    except SessionBusy as exc:
        raise TurnRejected(str(exc)) from None


def _release(ctx: SessionContext) -> None:
    try:
        ctx.release()
    except OperationalError as exc:
        if not dbfaults.is_locked(exc):
            raise
        # The lock that ended the turn holds still: the lease lapses by itself.
        log.warning("session %s: database locked, its turn lease left to expire", ctx.session_id)


async def _run(ctx, text, turn_id, attached, emit, client, after) -> TurnFinished:
    user_message, images = await _store_user_message(ctx, text, turn_id, *attached)
    session, mentions = ctx.session, tuple(user_message.mentions)
    started = (user_message.id, text, ctx.model, session.title, attached[0], mentions)
    await emit(TurnStarted(turn_id, session.id, *started))
    turn = _Turn(emit, turn_id, ctx, text, None, user_message.id)
    waiting = repomap_engine.warming_notice()
    if waiting:
        await emit(TurnNotice(turn_id, waiting, "info"))
    try:
        turn.prepared = await context.prepare(ctx, user_text=text, turn_id=turn_id, images=images)
    except LLMError as exc:
        return await _end(turn, _Stream(), "error", exc.user_message)
    except Exception as exc:
        return await _failed(turn, _Stream(), exc)
    for notice in turn.prepared.notices:
        await emit(TurnNotice(turn_id, notice.text, notice.level, notice.paths))
    request = LLMRequest(
        model=ctx.model,
        messages=turn.prepared.messages,
        tools=ctx.tools,  # side requests repeat them
        metadata=turn.prepared.metadata,
    )
    finished = await _stream(turn, request, outgoing.client(client or llm_client()))
    if after is not None and finished.status == "complete":
        await after(ctx)
    return finished


@dataclass
class _Turn:
    emit: Emit
    turn_id: str
    ctx: SessionContext
    user_text: str
    prepared: context.Prepared | None
    user_message_id: str

    @property
    def session(self) -> Session:
        return self.ctx.session


async def _stream(turn: _Turn, request: LLMRequest, client: LLMClient) -> TurnFinished:
    """Stream the answer; while the model asks for tools (and rounds are left), run them,
    hand back their results and stream again. All text goes into one answer."""
    state = _Stream()
    rounds, retried = 0, False  # at most one retry round for failed edit blocks
    try:
        while True:
            calls = await _one_response(turn, request, client, state)
            if not calls:
                if retried or not (ask := await _retry(turn.session, request, state.text)):
                    break
                request, retried = ask, True
            elif rounds >= settings.ACDC_MAX_TOOL_ROUNDS:
                request = await toolrounds.tools_exhausted(turn, request, calls)
                continue
            else:
                rounds += 1
                results = await toolrounds.run_tools(turn, state, calls)
                messages = [*request.messages, *toolrounds.round_messages(calls, results)]
                request = replace(request, messages=toolrounds.fit_tool_outputs(turn, messages))
            if state.text and not state.text.endswith("\n\n"):
                state.text += "\n\n"
    except asyncio.CancelledError:
        if _STOPPING.is_set():
            await asyncio.shield(_end(turn, state, "interrupted", services.INTERRUPTED_NOTE))
        else:
            await asyncio.shield(_end(turn, state, "cancelled", ""))
        raise
    except LLMError as exc:
        if _STOPPING.is_set():
            return await _end(turn, state, "interrupted", services.INTERRUPTED_NOTE)
        log.warning("turn %s failed: %s %s", turn.turn_id, exc.user_message, exc.detail)
        return await _end(turn, state, "error", exc.user_message)
    except BrokenPipeError:  # the reader of `acdc chat` went away: end, then stop quietly
        await asyncio.shield(_end(turn, state, "interrupted", services.INTERRUPTED_NOTE))
        raise
    except Exception as exc:
        return await _failed(turn, state, exc)
    if not state.ended:
        return await _end(turn, state, "interrupted", CLOSED_EARLY)
    return await _end(turn, state, "complete", "")


async def _failed(turn: _Turn, state: _Stream, exc: Exception) -> TurnFinished:
    """A fault nobody foresaw (a bug, a tool round that broke) ends the turn as an error:
    the answer so far is stored, the page shows why and offers Retry, the log has the
    traceback. Left to escape, it would leave the reply streaming with no way on."""
    if _STOPPING.is_set():
        return await _end(turn, state, "interrupted", services.INTERRUPTED_NOTE)
    log.error("turn %s failed", turn.turn_id, exc_info=exc)
    reason = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
    return await _end(turn, state, "error", f"{FAILED}: {reason}")


def begin_shutdown() -> None:
    """The server is stopping: turns that end from now on are stored as interrupted."""
    _STOPPING.set()


async def _one_response(
    turn: _Turn, request: LLMRequest, client: LLMClient, state: _Stream
) -> list[ToolCall]:
    """One streamed response; returns the tool calls it ended with (often none). Notes in
    `state.ended` whether the provider said it had finished."""
    pieces: dict[int, dict[str, str]] = {}
    state.ended = False
    async for event in client.stream(request):
        if isinstance(event, TextDelta) and event.text:
            state.text += event.text.replace("\0", "\ufffd")  # storable everywhere
            if not state.saved_at:
                state.saved_at = time.monotonic()  # the first chunk
            await _save_partial(turn, state)
            await turn.emit(TurnDelta(turn.turn_id, state.text))
        elif isinstance(event, ToolCallDelta):
            piece = pieces.setdefault(event.index, {"id": "", "name": "", "arguments": ""})
            piece["id"] = event.id or piece["id"]
            piece["name"] = event.name or piece["name"]
            piece["arguments"] += event.arguments or ""
        elif isinstance(event, UsageReport):
            state.add_usage(event.usage)
        elif isinstance(event, StreamEnd):
            state.ended = event.finish_reason is not None
            state.finish_reason = event.finish_reason
        elif isinstance(event, Retrying):
            await turn.emit(TurnRetrying.of(turn.turn_id, event))
    return [ToolCall(p["id"], p["name"], p["arguments"]) for _, p in sorted(pieces.items())]


async def _end(turn: _Turn, state: _Stream, status: str, error: str) -> TurnFinished:
    """Store how the turn ended and commit its context, in one transaction; then tell the
    page. The lease is given back in the same commit."""
    notices = _ending_notices(state, status)
    try:
        hud_data = await database_sync_to_async(_commit_with_retry)(
            turn, state, status, error, notices
        )
    except Exception:
        # The answer must not be lost to a failing HUD or header: store it on its own.
        log.exception("could not commit turn %s", turn.turn_id)
        hud_data = None
        await database_sync_to_async(_store_answer)(turn, state, status, error)
    for text in notices:
        await turn.emit(TurnNotice(turn.turn_id, text, "warning"))
    usage = state.usage.as_dict() if state.usage else {}
    tc = tuple(state.tool_cards)  # the tool calls' cards
    seen = turn.prepared.seen if turn.prepared is not None else None
    finished = TurnFinished(
        turn.turn_id, status, state.text, state.message_id, usage, error, tc, turn.user_text, seen
    )
    await turn.emit(finished)
    if hud_data is not None:
        await turn.emit(HudUpdate(turn.turn_id, hud_data))
    return finished


def _ending_notices(state: _Stream, status: str) -> list[str]:
    if status == "complete" and not state.text.strip() and not state.tool_cards:
        return ["The model sent an empty answer. Try again, or rephrase the question."]
    if status == "complete" and state.finish_reason == "length":
        return ["The answer reached the model's output limit and stops mid-way."]
    return []


def _commit_with_retry(turn: _Turn, state: _Stream, status: str, error: str, notices):
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
def _commit_ending(turn: _Turn, state: _Stream, status: str, error: str, notices: list[str]):
    _store_answer(turn, state, status, error)
    for text in notices:
        turn.ctx.append(
            role=Message.Role.SYSTEM, content=text, turn_id=turn.turn_id, system_event=True
        )
    if turn.prepared is None:  # failed before the request was made
        turn.ctx.commit(release=True)
        return None
    return context.finish_turn(
        turn.ctx,
        turn.prepared,
        turn_id=turn.turn_id,
        user_text=turn.user_text,
        status=status,
        answer=state.text,
        usage=state.usage,
        ids=(turn.user_message_id, state.message_id or ""),
        toolcalls=state.tool_refs,
    )


def _store_answer(turn: _Turn, state: _Stream, status: str, error: str) -> None:
    """The assistant row: made now when the reply was quick (no partial save yet), and
    always for a failure, so a reload shows the question answered by its error."""
    usage = state.usage.as_dict() if state.usage else {}
    turn.ctx.reply_text = state.text  # the after-turn work looks for edit blocks in it
    if state.message_id is None:
        _store_new_answer(turn, state, status, usage=usage, error=error)
        return
    services.message_finish(
        message_id=state.message_id, content=state.text, status=status, usage=usage, error=error
    )


def _store_new_answer(turn: _Turn, state: _Stream, status: str, **fields) -> None:
    fields.setdefault("content", state.text)
    message = turn.ctx.append(
        role=Message.Role.ASSISTANT,
        turn_id=turn.turn_id,
        status=status,
        model=turn.ctx.model,
        **fields,
    )
    state.message_id = message.id


async def _save_partial(turn: _Turn, state: _Stream) -> None:
    """At most once a second: the reply so far goes to the store (a crash loses at most
    the last second of what was shown), and the turn lease is renewed while it runs."""
    now = time.monotonic()
    if now - state.saved_at < SAVE_EVERY_SECONDS:
        return
    state.saved_at = now
    await database_sync_to_async(_save_partial_rows)(turn, state)
    if state.stop_asked:
        raise asyncio.CancelledError  # as the Stop of a tab on this worker would


def _save_partial_rows(turn: _Turn, state: _Stream) -> None:
    """One commit: the row (first time, without text), the new text as a part, the lease."""
    end = len(state.text)
    with transaction.atomic():
        if state.message_id is None:
            _store_new_answer(turn, state, Message.Status.STREAMING, content="")
        new = state.text[state.stored : end]
        stream_append(message_id=state.message_id, offset=state.stored, text=new)
        # Every save learns whether Stop was asked for from a tab on another worker; the
        # lease is extended every third of its time (writing the session row is not small).
        extend = time.monotonic() - state.renewed_at >= settings.ACDC_TURN_LEASE_SECONDS / 3
        renewed = renew_lease(turn.ctx.session_id, turn.ctx.owner, extend=extend)
    state.renewed_at = time.monotonic() if extend else state.renewed_at
    state.stored = end
    if not renewed:
        state.stop_asked = True


def _validated(user_text: str) -> str:
    # NUL cannot be stored (PostgreSQL text refuses it) and means nothing in a chat.
    text = (user_text or "").replace("\0", "").strip()
    if not text:
        raise TurnRejected("The message is empty.")
    limit = settings.ACDC_MAX_MESSAGE_CHARS
    if len(text) > limit:
        raise TurnRejected(
            f"The message is too long ({len(text):,} characters; at most {limit:,})."
        )
    return text


@database_sync_to_async
def _store_user_message(
    ctx: SessionContext, text: str, turn_id: str, images: tuple, mentioned: tuple, alt_of: str
) -> tuple[Message, list[Image]]:
    """The person's message, stored with its images and mentions; returns it and the
    images as read (the request is assembled from them, not from another read)."""
    try:
        attached = images_get(images) if images else []
        named = checked(mentioned, ctx.session) if mentioned else []
    except (ImageRejected, MentionRefused) as exc:
        raise TurnRejected(str(exc)) from None
    fields = {"turn_id": turn_id, "model": ctx.model, "mentions": named, "alt_of": alt_of}
    message = ctx.append(role=Message.Role.USER, content=text, **fields)
    if attached:
        message_attach_images(message, attached)
    return message, attached
