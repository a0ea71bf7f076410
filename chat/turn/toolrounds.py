"""The tool rounds of a turn: run the model's tool calls, store them, hand back results.

Each call runs in a worker thread (a command tool's in the turn's own task, so Stop
cancels the run and kills its processes: `chat.repo.commands`) and is stored as a `tool`
message of the turn (its output in the content, its details in `edit_results`), through
the turn's own context so its number comes from the same sequence. Results go back to the
model as one assistant message with the text it wrote before the calls and the calls, then
one tool message per result (every later request of the turn repeats them unchanged);
outputs that would overflow the window give way to a short note. `turn` and `state` are
the turn's own objects (`chat.turn.turns`): their emit, context and prepared request, and
the stream's cards.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings

from chat.repo import edittools, indexing, sessionsets
from chat.repo.commands import model_tools
from chat.repo.commands.livefeed import LiveOutput
from chat.repo.mcp import model_calls
from chat.repo.tools.calls import ToolCall, ToolResult
from chat.repo.tools.context_tools import run_tool
from chat.session import SessionContext
from chat.session.working import ToolRef
from chat.turn.events import (
    SetsChanged,
    ToolCallFinished,
    ToolCallOutput,
    ToolCallStarted,
    ToolCallWaiting,
    TurnNotice,
)
from contextcore.llm import LLMRequest
from history.edits import edits_told
from history.models import Message, Session

STOPPED = "Stopped: the run was killed with the turn (Stop)."
TOOL_OUTPUT_DROPPED = "[output dropped: the context window is full; ask again more narrowly]"


def fit_tool_outputs(turn: Any, messages: list[dict]) -> list[dict]:
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


async def tools_exhausted(
    turn: Any, request: LLMRequest, calls: list[ToolCall], text: str = ""
) -> LLMRequest:
    """Past the round limit: no more tools; the model answers with what it has."""
    limit = settings.ACDC_MAX_TOOL_ROUNDS
    text = f"The model asked for more tools after {limit} rounds; it was asked to answer now."
    await turn.emit(TurnNotice(turn.turn_id, text, "warning"))
    refusal = f"Tool limit reached ({limit} rounds): answer now with what you have."
    results = [ToolResult(c.call_id, c.name, "fail", refusal) for c in calls]
    messages = [*request.messages, *round_messages(calls, results, text)]
    return replace(request, messages=messages, tools=None)


async def run_tools(turn: Any, state: Any, calls: list[ToolCall]) -> list[ToolResult]:
    if turn.ctx.edit_calls:  # the model has read the rounds before: their failures are told
        await database_sync_to_async(edits_told)(turn.turn_id)
    results = []
    for call in calls:
        display = f"{call.name}(…)"
        await turn.emit(
            ToolCallStarted(turn.turn_id, call.call_id or call.name, call.name, display)
        )
        connections = turn.ctx.repository.mcp
        if connections is not None and model_calls.handles(call.name):
            reach = model_calls.reach(
                turn.session.id,
                connections,
                page=turn.page_served,
                allowed=turn.allow_mcp,
                turn_id=turn.turn_id,
                waiting=_waiting(turn, call) if turn.page_served else None,
            )
            result = await model_calls.run_mcp_call(turn.session, call, reach)
            await database_sync_to_async(store_result)(
                turn.ctx, turn.turn_id, result, at=len(state.text)
            )
        elif model_tools.handles(call.name):  # async: Stop must reach the running command
            result = await _command_call(turn, call, display)
            await database_sync_to_async(store_result)(
                turn.ctx, turn.turn_id, result, at=len(state.text)
            )
        else:
            store = database_sync_to_async(run_and_store)
            result = await store(turn.ctx, turn.turn_id, call, at=len(state.text))
        finished = ToolCallFinished(
            turn.turn_id,
            call.call_id or call.name,
            call.name,
            result.args_display or display,
            result.status,
            result.shown or result.output,
            result.object_id,
            result.proposal,
        )
        state.tool_cards.append(finished)
        state.tool_refs.append(ToolRef(result.object_id, call.name, result.status))
        await turn.emit(finished)
        if result.changed_paths:
            budget = turn.prepared.facts.input_budget
            changed = await sets_changed(
                turn.turn_id,
                turn.session,
                result.changed_paths,
                budget=budget,
                repo=turn.ctx.repository.indexed(),
            )
            await turn.emit(changed)
        results.append(result)
    return results


async def _command_call(turn: Any, call: ToolCall, display: str) -> ToolResult:
    """A command tool's call; in a page's turn with its card live (waiting for the
    person, the output so far). Stop kills a run, and its card says so instead of
    spinning on in the stopped reply."""
    waiting = _waiting(turn, call) if turn.page_served else None
    live = _live(turn, call) if turn.page_served else None
    try:
        return await model_tools.run_command_call(
            turn.session,
            call,
            turn.commands,
            turn_id=turn.turn_id,
            root=turn.ctx.repository.root,
            waiting=waiting,
            on_output=live,
        )
    except asyncio.CancelledError:
        if live is not None and call.name == "run_command" and not turn.commands.needs_approval:
            call_id = call.call_id or call.name
            ended = ToolCallFinished(turn.turn_id, call_id, call.name, display, "fail", STOPPED, "")
            await asyncio.shield(turn.emit(ended))
        raise
    finally:
        if live is not None:
            await live.close()


def _waiting(turn: Any, call: ToolCall):
    """How a proposed command's card is shown while the call waits for the person."""

    async def waiting(shown: str, proposal: dict) -> None:
        await turn.emit(
            ToolCallWaiting(turn.turn_id, call.call_id or call.name, call.name, shown, proposal)
        )

    return waiting


def _live(turn: Any, call: ToolCall) -> LiveOutput:
    """A running command's output into its card, a few times a second, capped."""

    async def send(text: str, total: int) -> None:
        await turn.emit(ToolCallOutput(turn.turn_id, call.call_id or call.name, text, total))

    return LiveOutput(send)


def run_and_store(ctx: SessionContext, turn_id: str, call: ToolCall, at: int = 0) -> ToolResult:
    """Run one call and store it as a tool message; `at` is where in the reply's text the
    model made the call, so a page drawn from the store puts its card there."""
    if edittools.handles(call.name):
        ctx.edit_calls += 1  # its rows wait for the answer (the after-turn work binds them)
        repo = ctx.repository.indexed(ctx.session)
        result = edittools.run_edit_tool(
            ctx.session, call, turn_id=turn_id, repo=repo, apply_now=ctx.apply_now
        )
    else:
        result = run_tool(ctx.session, call, ctx.repository.indexed(ctx.session), maps=ctx.maps)
    store_result(ctx, turn_id, result, at)
    return result


def store_result(ctx: SessionContext, turn_id: str, result: ToolResult, at: int = 0) -> None:
    """Store a call's result as a tool message of the turn."""
    ctx.append(
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
                "at": at,
                **({_answered(result.proposal): result.proposal["id"]} if result.proposal else {}),
                **({"shown": result.shown} if result.shown else {}),
            }
        ],
    )


@database_sync_to_async
def sets_changed(
    turn_id: str,
    session: Session,
    paths,
    *,
    budget: int,
    repo: indexing.Repository,
    touched: bool = True,
) -> SetsChanged:
    """`paths` changed in the session's sets: what the Files panel shows of them now.
    `budget` is the turn's input budget, for a session whose HUD has none yet."""
    active, outlines, pinned = map(tuple, sessionsets.file_choice(session, repo))
    hud = (session.context_state or {}).get("hud") or {}
    shed, budget = tuple(hud.get("shed") or ()), int(hud.get("window") or budget)
    sets = (active, pinned, outlines, shed, budget)
    return SetsChanged(turn_id, tuple(paths), *sets, touched=touched, root=str(repo.root))


def _answered(proposal: dict) -> str:
    """The key a stored card names the person's answer by: an MCP tool's approval, or a
    command's proposal."""
    return "approval" if proposal.get("mcp") else "proposal"


def round_messages(calls: list[ToolCall], results: list[ToolResult], text: str = "") -> list[dict]:
    """The assistant's message as the model wrote it, its `text` before the tool calls,
    then one tool message per result, as providers expect. The text is the model's own
    reasoning before acting: dropping it would change what the model sees next, and the
    message is sent unchanged on every later request of the turn (append-only)."""
    assistant = {
        "role": "assistant",
        "content": text if text.strip() else None,
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
