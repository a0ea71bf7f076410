"""One chat turn, start to end, for the browser and the terminal alike.

Order: store the user message -> assemble the prompt -> stream -> store the assistant
message and usage -> save the context state -> maybe compact. A turn runs as one asyncio
task; cancelling it (Stop, disconnect) stores the partial answer as `cancelled`. Provider
errors store the partial answer as `error`. Nothing already shown to the user is lost:
the streaming row is saved at least once a second.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace

from channels.db import database_sync_to_async
from django.conf import settings
from django.db import transaction

from chat.llm.runtime import chat_model, llm_client, supports_tools, token_counter
from chat.repo import sessionsets
from chat.repo.tools import TOOL_SPECS, ToolCall, ToolResult, run_tool
from chat.turn import context
from chat.turn.events import (
    HudUpdate,
    SetsChanged,
    ToolCallFinished,
    ToolCallStarted,
    TurnDelta,
    TurnEvent,
    TurnFinished,
    TurnNotice,
    TurnStarted,
)
from contextcore.llm import (
    LLMClient,
    LLMError,
    LLMRequest,
    TextDelta,
    ToolCallDelta,
    Usage,
    UsageReport,
)
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
    tool_cards: list[ToolCallFinished] = field(default_factory=list)
    tool_refs: list[context.ToolRef] = field(default_factory=list)

    def add_usage(self, usage: Usage) -> None:
        """Every round of a tool loop is billed: the turn's usage is their sum."""
        if self.usage is None:
            self.usage = usage
            return
        self.usage = Usage(
            prompt_tokens=self.usage.prompt_tokens + usage.prompt_tokens,
            completion_tokens=self.usage.completion_tokens + usage.completion_tokens,
            cache_read_tokens=self.usage.cache_read_tokens + usage.cache_read_tokens,
            cache_write_tokens=self.usage.cache_write_tokens + usage.cache_write_tokens,
        )


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
    tools = TOOL_SPECS if await asyncio.to_thread(supports_tools, model) else None
    try:
        prepared = await context.prepare(
            session=session,
            user_text=text,
            model=model,
            turn_id=turn_id,
            images=tuple(images),
            tool_tokens=tool_tokens(tools),
        )
    except LLMError as exc:
        return await _finish(emit, turn_id, session, _Stream(), "error", exc.user_message)
    for notice in prepared.notices:
        await emit(TurnNotice(turn_id, notice.text, notice.level, notice.paths))
    request = LLMRequest(
        model=model, messages=prepared.messages, tools=tools, metadata=prepared.metadata
    )
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
    """Stream the answer; while the model asks for tools (and rounds are left), run them,
    hand back their results and stream again. All text goes into one answer."""
    state = _Stream()
    rounds = 0
    try:
        while True:
            calls = await _one_response(turn, request, client, state)
            if not calls:
                break
            if rounds >= settings.ACDC_MAX_TOOL_ROUNDS:
                request = await _tools_exhausted(turn, request, calls)
                continue
            rounds += 1
            results = await _run_tools(turn, state, calls)
            messages = [*request.messages, *_round_messages(calls, results)]
            request = replace(request, messages=_fit_tool_outputs(turn, messages))
            if state.text and not state.text.endswith("\n\n"):
                state.text += "\n\n"
    except asyncio.CancelledError:
        await asyncio.shield(_end(turn, state, "cancelled", ""))
        raise
    except LLMError as exc:
        log.warning("turn %s failed: %s %s", turn.turn_id, exc.user_message, exc.detail)
        return await _end(turn, state, "error", exc.user_message)
    return await _end(turn, state, "complete", "")


async def _one_response(
    turn: _Turn, request: LLMRequest, client: LLMClient, state: _Stream
) -> list[ToolCall]:
    """One streamed response; returns the tool calls it ended with (often none)."""
    pieces: dict[int, dict[str, str]] = {}
    async for event in client.stream(request):
        if isinstance(event, TextDelta) and event.text:
            state.text += event.text.replace("\0", "\ufffd")  # storable everywhere
            await _save_partial(state, turn.session, turn.turn_id, request.model)
            await turn.emit(TurnDelta(turn.turn_id, state.text))
        elif isinstance(event, ToolCallDelta):
            piece = pieces.setdefault(event.index, {"id": "", "name": "", "arguments": ""})
            piece["id"] = event.id or piece["id"]
            piece["name"] = event.name or piece["name"]
            piece["arguments"] += event.arguments or ""
        elif isinstance(event, UsageReport):
            state.add_usage(event.usage)
    return [ToolCall(p["id"], p["name"], p["arguments"]) for _, p in sorted(pieces.items())]


def tool_tokens(tools: list[dict] | None) -> int:
    """What the tool definitions cost in every request (counted like message text)."""
    if not tools:
        return 0

    return token_counter("cl100k_base").count(json.dumps(tools)) + 16 * len(tools)


TOOL_OUTPUT_DROPPED = "[output dropped: the context window is full; ask again more narrowly]"


def _fit_tool_outputs(turn: _Turn, messages: list[dict]) -> list[dict]:
    """Keep a tool round inside the window: the largest tool outputs of this turn give way
    to a short note until the request fits (the prompt itself was fitted before)."""
    counter, budget = turn.prepared.manager.counter, turn.prepared.facts.input_budget
    total = counter.count(messages)
    if total <= budget:
        return messages
    fitted = [dict(m) for m in messages]
    tool_indexes = sorted(
        (i for i, m in enumerate(fitted) if m.get("role") == "tool"),
        key=lambda i: -counter.count(fitted[i]),
    )
    for index in tool_indexes:
        if total <= budget:
            break
        before = counter.count(fitted[index])
        fitted[index]["content"] = TOOL_OUTPUT_DROPPED
        total -= before - counter.count(fitted[index])
    return fitted


async def _tools_exhausted(turn: _Turn, request: LLMRequest, calls: list[ToolCall]) -> LLMRequest:
    """Past the round limit: no more tools; the model answers with what it has."""
    limit = settings.ACDC_MAX_TOOL_ROUNDS
    text = f"The model asked for more tools after {limit} rounds; it was asked to answer now."
    await turn.emit(TurnNotice(turn.turn_id, text, "warning"))
    refusal = f"Tool limit reached ({limit} rounds): answer now with what you have."
    results = [ToolResult(c.call_id, c.name, "fail", refusal) for c in calls]
    messages = [*request.messages, *_round_messages(calls, results)]
    return replace(request, messages=messages, tools=None)


async def _run_tools(turn: _Turn, state: _Stream, calls: list[ToolCall]) -> list[ToolResult]:
    results = []
    for call in calls:
        display = f"{call.name}(…)"
        await turn.emit(
            ToolCallStarted(turn.turn_id, call.call_id or call.name, call.name, display)
        )
        result = await database_sync_to_async(_run_and_store)(turn.session, turn.turn_id, call)
        finished = ToolCallFinished(
            turn.turn_id,
            call.call_id or call.name,
            call.name,
            result.args_display or display,
            result.status,
            result.output,
            result.object_id,
        )
        state.tool_cards.append(finished)
        state.tool_refs.append(context.ToolRef(result.object_id, call.name, result.status))
        await turn.emit(finished)
        if result.changed_paths:
            active, pinned = await database_sync_to_async(_picker_state)(turn.session)
            await turn.emit(SetsChanged(turn.turn_id, tuple(result.changed_paths), active, pinned))
        results.append(result)
    return results


def _run_and_store(session: Session, turn_id: str, call: ToolCall) -> ToolResult:
    result = run_tool(session, call)
    services.message_append(
        session=session,
        role=Message.Role.TOOL,
        content=result.output,
        turn_id=turn_id,
        edit_results=[
            {
                "tool": result.name,
                "args": result.args_display,
                "status": result.status,
                "object_id": result.object_id,
                "call_id": result.call_id,
            }
        ],
    )
    return result


def _picker_state(session: Session) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return tuple(sessionsets.active_paths(session)), tuple(sessionsets.pinned_paths(session))


def _round_messages(calls: list[ToolCall], results: list[ToolResult]) -> list[dict]:
    """The assistant's tool calls and one tool message per result, as providers expect."""
    assistant = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": result.call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments or "{}"},
            }
            for call, result in zip(calls, results, strict=True)
        ],
    }
    answers = [
        {"role": "tool", "tool_call_id": result.call_id, "content": result.output}
        for result in results
    ]
    return [assistant, *answers]


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
            toolcalls=state.tool_refs,
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
    cards = tuple(state.tool_cards)
    finished = TurnFinished(turn_id, status, state.text, state.message_id, usage, error, cards)
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
