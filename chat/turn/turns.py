"""One chat turn, start to end, for the browser and the terminal alike.

Order: store the user message -> assemble the prompt -> stream -> store the assistant
message and usage -> save the context state -> maybe compact. A turn runs as one asyncio
task; cancelling it (Stop) stores the partial answer as `cancelled`, and once the server is
stopping (the `stopping` its turn host hands in says so) any ending is `interrupted`.
Provider errors, and any fault nobody foresaw, store the partial answer as `error`. Nothing
already shown to the user is lost: what is new is saved at least once a second
(`chat.turn.reply`, which also ends the turn and commits it). The turn's client, facts and
counters are the runtime its session context was opened with (`chat.llm.runtime.Runtime`),
its repository maps the `maps` it is handed (both from the served object,
`chat.live.served`).
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from channels.db import database_sync_to_async
from django.conf import settings
from django.db import DatabaseError, IntegrityError, OperationalError, transaction

from chat.repo.commands.runner import CommandRuns
from chat.repo.edits.replies import retry_request
from chat.repo.mcp import model_calls
from chat.repo.mentions import Mention, MentionRefused, checked
from chat.repo.repomap import engine as repomap_engine
from chat.repo.tools.calls import ToolCall
from chat.session import SessionBusy, SessionContext, SessionMissing, Wiring, outgoing
from chat.turn import faults, reply, sending, toolrounds
from chat.turn.events import (
    TurnDelta,
    TurnEvent,
    TurnFinished,
    TurnNotice,
    TurnRetrying,
    TurnStarted,
)
from chat.turn.preparation import prepare
from contextcore.controls import printable
from contextcore.llm import (
    LLMClient,
    LLMError,
    LLMRequest,
    Retrying,
    StreamEnd,
    TextDelta,
    ToolCallDelta,
    UsageReport,
)
from history import dbfaults, services
from history.ids import new_turn_id
from history.images import ImageRejected, images_get, message_attach_images
from history.models import Image, Message

log = logging.getLogger(__name__)
Emit = Callable[[TurnEvent], Awaitable[None]]
After = Callable[[SessionContext], Awaitable[object]]
_retry = database_sync_to_async(retry_request)  # the reply's failed edit blocks, asked again
FAILED = "Something went wrong on the server, so the turn stopped (the log has the details)"
CLOSED_EARLY = "The provider closed the stream early: the answer may be cut short."


_UNSTORABLE = re.compile("[\0\ud800-\udfff]")


def storable(text: str) -> str:
    """Model text that every store, renderer and socket takes: a NUL (PostgreSQL text
    cannot hold one) and a lone surrogate (a JSON escape of half a character, which UTF-8
    cannot encode) become U+FFFD; control sequences but colours are removed (`printable`:
    no terminal that prints it is the model's)."""
    return printable(_UNSTORABLE.sub("\ufffd", text) if _UNSTORABLE.search(text) else text)


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


def fault_notice(session_id: str, user_text: str, since: datetime, fault: faults.Fault) -> str:
    """What the tab is told when a fault of the disk, the database or Redis stopped work
    on its message before its reply began: whether the message was stored decides."""
    text = (user_text or "").replace("\0", "").strip()
    mine = Message.objects.filter(session_id=session_id, role=Message.Role.USER, content=text)
    try:
        sent = bool(text) and mine.filter(timestamp__gte=since).exists()
    except DatabaseError:
        sent = False
    if sent:
        return f"{fault.line()} Your message was sent, but its reply could not begin."
    return f"{fault.line(then='send it again')} Your message was not sent and is still in the box."


@dataclass(frozen=True)
class TurnInput:
    """What the person sent, as the turn stores and sends it."""

    session_id: str
    user_text: str
    model: str = ""
    images: Sequence[str] = ()
    mentions: Sequence[Mention] = ()
    alt_of: str = ""  # the message is a new version of this one (Regenerate, Edit)
    turn_id: str = ""  # a new one when not given
    apply_now: bool = False  # `acdc chat --apply`: the reply's edits apply when it ends
    allow_mcp: frozenset[str] = frozenset()  # `--allow-mcp`: these servers' tools run unasked


def _never() -> bool:
    return False


@dataclass(frozen=True)
class TurnServices:
    """What the turn uses, handed down from its entry point: where its events go, what the
    process serves, and what runs once the reply is delivered."""

    emit: Emit
    wiring: Wiring  # the turn's client, facts, counters and repository maps
    after: After | None = None  # with the turn's context, before the lease is given back
    client: LLMClient | None = None  # stands in for the wiring's client
    stopping: Callable[[], bool] = _never  # the server stops: any ending interrupts the turn
    commands: CommandRuns | None = None  # the model's commands (a new owner per turn if None)
    page_served: bool = False  # a page serves the turn: a proposed command waits for it


async def run_turn(sent: TurnInput, services: TurnServices) -> TurnFinished:
    """One turn under the session's lease: refused (`TurnRejected`) while another turn
    runs in the session, in any tab or worker. `services.after` runs once the reply is
    delivered, with the turn's context, before the lease is given back. With
    `sent.apply_now` the reply's edits apply when it ends, as with the session's
    Auto-apply; the tools of the MCP servers in `sent.allow_mcp` run without asking."""
    text = _validated(sent.user_text)
    session_id, model, wiring = sent.session_id, sent.model, services.wiring
    turn_id = sent.turn_id or new_turn_id()
    attached = (tuple(sent.images), tuple(sent.mentions), sent.alt_of)
    ctx, stored = await _open(session_id, turn_id, text, model, wiring, attached)
    ctx.apply_now = sent.apply_now
    try:
        allow_mcp = frozenset(sent.allow_mcp)
        parts = (services.client, services.after, services.stopping, services.commands)
        parts += (services.page_served, allow_mcp)
        return await _run(ctx, text, turn_id, (stored, attached[0]), services.emit, parts)
    finally:
        if ctx.owner:
            await database_sync_to_async(_release)(ctx)


async def _open(session_id, turn_id, text, model, wiring: Wiring, attached: tuple):
    # The MCP tools the context offers: listed once per session and set of servers.
    await model_calls.take(session_id, getattr(wiring.repository, "mcp", None))
    try:
        return await database_sync_to_async(_open_and_store)(
            session_id, turn_id, text, model, wiring, attached
        )
    except SessionMissing:
        raise TurnRejected(f"There is no session {session_id!r}.") from None
    except SessionBusy as exc:
        raise TurnRejected(str(exc)) from None


def _open_and_store(session_id, turn_id, text, model, wiring, attached):
    """Take the lease, open the context and store the person's message in one transaction:
    one commit where there were two (the pages both wrote, the WAL's first page among
    them, are written once; issue 42 item 13), and a message that cannot be stored leaves
    no lease behind. On SQLite the transaction holds the write lock from its start, so no
    other writer can take the next message number in between; where another did
    (PostgreSQL), the whole opening is tried once more."""
    try:
        return _opened(session_id, turn_id, text, model, wiring, attached)
    except IntegrityError:
        return _opened(session_id, turn_id, text, model, wiring, attached)


def _opened(session_id, turn_id, text, model, wiring, attached):
    with transaction.atomic():
        ctx = prepare.open_turn(session_id, turn_id, text, model, wiring)
        return ctx, _store_user_message(ctx, text, turn_id, *attached)


def _release(ctx: SessionContext) -> None:
    try:
        ctx.release()
    except OperationalError as exc:
        if dbfaults.is_locked(exc):
            # The lock that ended the turn holds still: the lease lapses by itself.
            log.warning("session %s: database locked, its lease left to expire", ctx.session_id)
            return
        fault = faults.fault_of(exc)
        if fault is None:
            raise
        # The turn host gives it back once storage is back (`reply.store_late`).
        log.warning("session %s: its turn lease waits: %s", ctx.session_id, fault.line())


async def _run(ctx, text, turn_id, attached, emit, parts) -> TurnFinished:
    client, after, stopping, commands, page_served, allow_mcp = parts
    (user_message, images), image_ids = attached
    session, mentions = ctx.session, tuple(user_message.mentions)
    started = (user_message.id, text, ctx.model, session.title, image_ids, mentions)
    await emit(TurnStarted(turn_id, session.id, *started))
    turn = reply.Turn(emit, turn_id, ctx, text, None, user_message.id, stopping)
    if commands is not None:
        turn.commands = commands
    turn.page_served = page_served
    turn.allow_mcp = allow_mcp
    waiting = repomap_engine.warming_notice(ctx.maps, ctx.repository.root)
    if waiting:
        await emit(TurnNotice(turn_id, waiting, "info"))
    try:
        turn.prepared = await prepare.prepare(ctx, user_text=text, turn_id=turn_id, images=images)
    except asyncio.CancelledError:  # Stop, or the server stopping (SIGTERM) before a token
        status = "interrupted" if turn.stopping() else "cancelled"
        note = services.INTERRUPTED_NOTE if turn.stopping() else ""
        await asyncio.shield(reply.end(turn, reply.Stream(), status, note))
        raise
    except LLMError as exc:
        return await reply.end(turn, reply.Stream(), "error", exc.user_message)
    except Exception as exc:
        return await _failed(turn, reply.Stream(), exc)
    for notice in turn.prepared.notices:
        await emit(TurnNotice(turn_id, notice.text, notice.level, notice.paths))
    if dropped := [p for notice in turn.prepared.notices for p in notice.paths]:
        budget = turn.prepared.facts.input_budget
        repo = ctx.repository.indexed()
        changed = toolrounds.sets_changed(
            turn_id, session, dropped, budget=budget, repo=repo, touched=False
        )
        await emit(await changed)
    request = LLMRequest(
        model=ctx.model,
        messages=turn.prepared.messages,
        tools=ctx.tools,  # side requests repeat them
        metadata=turn.prepared.metadata,
    )
    finished = await _stream(turn, request, outgoing.client(client or ctx.runtime.client))
    if after is not None and finished.status == "complete":
        await after(ctx)
    return finished


async def _stream(turn: reply.Turn, request: LLMRequest, client: LLMClient) -> TurnFinished:
    """Stream the answer; while the model asks for tools (and rounds are left), run them,
    hand back their results and stream again. All text goes into one answer."""
    state = reply.Stream()
    rounds, retried = 0, False  # at most one retry round for failed edit blocks
    again = (turn.ctx.repository.indexed(), turn.ctx.apply_now)  # a retry's blocks: stored
    try:
        while True:
            said = len(state.text)  # where this response's own text starts
            # A server that refuses tools is asked again without (and remembered).
            calls, request = await sending.respond(turn, request, client, state, _one_response)
            said_text = state.text[said:]
            if not calls:
                if retried or not (
                    ask := await _retry(turn.session, request, state.text, turn.turn_id, *again)
                ):
                    break
                request, retried = ask, True
            elif rounds >= settings.ACDC_MAX_TOOL_ROUNDS:
                request = await toolrounds.tools_exhausted(turn, request, calls, said_text)
                continue
            else:
                rounds += 1
                results = await toolrounds.run_tools(turn, state, calls)
                answered = toolrounds.round_messages(calls, results, said_text)
                messages = [*request.messages, *answered]
                request = replace(request, messages=toolrounds.fit_tool_outputs(turn, messages))
            if state.text and not state.text.endswith("\n\n"):
                state.text += "\n\n"
    except asyncio.CancelledError:
        if turn.stopping():
            await asyncio.shield(reply.end(turn, state, "interrupted", services.INTERRUPTED_NOTE))
        else:
            await asyncio.shield(reply.end(turn, state, "cancelled", ""))
        raise
    except LLMError as exc:
        if turn.stopping():
            return await reply.end(turn, state, "interrupted", services.INTERRUPTED_NOTE)
        log.warning("turn %s failed: %s %s", turn.turn_id, exc.user_message, exc.detail)
        return await reply.end(turn, state, "error", exc.user_message)
    except BrokenPipeError:  # the reader of `acdc chat` went away: end, then stop quietly
        await asyncio.shield(reply.end(turn, state, "interrupted", services.INTERRUPTED_NOTE))
        raise
    except Exception as exc:
        return await _failed(turn, state, exc)
    if not state.ended:
        return await reply.end(turn, state, "interrupted", CLOSED_EARLY)
    return await reply.end(turn, state, "complete", "")


async def _failed(turn: reply.Turn, state: reply.Stream, exc: Exception) -> TurnFinished:
    """A fault nobody foresaw (a bug, a tool round that broke) ends the turn as an error:
    the answer so far is stored, the page shows why and offers Retry, the log has the
    traceback. Left to escape, it would leave the reply streaming with no way on."""
    if turn.stopping():
        return await reply.end(turn, state, "interrupted", services.INTERRUPTED_NOTE)
    fault = faults.fault_of(exc)
    if fault is not None:  # not acdc's: one line, here and in the reply, no traceback
        log.warning("turn %s stopped: %s", turn.turn_id, fault.line())
        return await reply.end(turn, state, "error", fault.line())
    log.error("turn %s failed", turn.turn_id, exc_info=exc)
    reason = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
    return await reply.end(turn, state, "error", f"{FAILED}: {reason}")


async def _one_response(
    turn: reply.Turn, request: LLMRequest, client: LLMClient, state: reply.Stream
) -> list[ToolCall]:
    """One streamed response; returns the tool calls it ended with (often none). Notes in
    `state.ended` whether the provider said it had finished."""
    pieces: dict[int, dict[str, str]] = {}
    state.ended = False
    async for event in client.stream(request):
        if isinstance(event, TextDelta) and event.text:
            state.text += storable(event.text)
            if not state.saved_at:
                state.saved_at = time.monotonic()  # the first chunk
            if reply.save_due(state):
                await reply.save_partial(turn, state)
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


def _store_user_message(
    ctx: SessionContext, text: str, turn_id: str, images: tuple, mentioned: tuple, alt_of: str
) -> tuple[Message, list[Image]]:
    """The person's message, stored with its images and mentions; returns it and the
    images as read (the request is assembled from them, not from another read)."""
    try:
        attached = images_get(images) if images else []
        repo = ctx.repository.indexed()
        named = checked(mentioned, ctx.session, repo, maps=ctx.maps) if mentioned else []
    except (ImageRejected, MentionRefused) as exc:
        raise TurnRejected(str(exc)) from None
    fields = {"turn_id": turn_id, "model": ctx.model, "mentions": named, "alt_of": alt_of}
    message = ctx.append(role=Message.Role.USER, content=text, **fields)
    if attached:
        message_attach_images(message, attached)
    return message, attached
