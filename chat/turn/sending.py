"""One request of a turn: sent, counted, and sent once more without tools when refused.

Every request the turn sends (the first, each tool round's, an edit retry) is counted on
the reply's `Stream` (`requests`), with its prompt tokens (`last_prompt`): the provider's
reported usage when it sent one, else acdc's count of exactly what was sent (the messages
and the tool definitions), which then stands in for the missing usage. One number per
request, the one the status line, the Context panel and the dry-run report show.

A model litellm's map does not know is offered tools when its provider speaks the OpenAI
API (`chat.llm.facts`); a server that takes none answers the first request with a client
error about them (`chat.llm.errors.refuses_tools`). The turn then sends the same request
without tools, its system prompt teaching SEARCH/REPLACE blocks instead of the edit tools,
says so once (page and terminal alike, as a notice), and the runtime remembers the model
for the life of the process: its later requests carry no tools. Any other error, or a
request that offered none, is raised as it was.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from chat.llm.errors import refuses_tools
from chat.llm.facts import TOOLS_SETTING
from chat.repo.edittools import BLOCKS_INSTRUCTION, TOOLS_INSTRUCTION
from chat.turn.events import TurnNotice
from contextcore.llm import LLMClient, LLMError, LLMRequest, Usage
from contextcore.prompt.siderequest import tool_tokens

Respond = Callable[[Any, LLMRequest, LLMClient, Any], Awaitable[list]]


def refused_notice(model: str) -> str:
    name = model.rsplit("/", 1)[-1]
    return (
        f"{name}'s server refused tools; this session goes on without them "
        f"(set {TOOLS_SETTING}={model}=off to skip the try)."
    )


async def respond(
    turn: Any, request: LLMRequest, client: LLMClient, state: Any, one: Respond
) -> tuple[list, LLMRequest]:
    """One response to `request` (`one` streams it), or, when the server refused the
    tools it offered, to the same request without them; returns the tool calls and the
    request that was answered (the turn's later rounds build on it)."""
    try:
        return await _counted(turn, request, client, state, one), request
    except LLMError as exc:
        if not request.tools or not refuses_tools(exc):
            raise
    turn.ctx.runtime.refuse_tools(request.model)
    turn.ctx.tools = None  # the turn's side requests repeat the chat's tools
    await turn.emit(TurnNotice(turn.turn_id, refused_notice(request.model), "warning"))
    plain = without_tools(request)
    return await _counted(turn, plain, client, state, one), plain


async def _counted(
    turn: Any, request: LLMRequest, client: LLMClient, state: Any, one: Respond
) -> list:
    """One response, counted with its prompt tokens once it has ended."""
    earlier = state.usage.prompt_tokens if state.usage else 0
    calls = await one(turn, request, client, state)
    prompt = (state.usage.prompt_tokens if state.usage else 0) - earlier
    if not prompt:  # no usage reported: acdc's count of what was sent stands in
        prompt = sent_tokens(turn, request)
        state.add_usage(Usage(prompt_tokens=prompt))
    state.requests, state.last_prompt = state.requests + 1, prompt
    return calls


def sent_tokens(turn: Any, request: LLMRequest) -> int:
    """acdc's count of a request as sent: its messages and its tool definitions."""
    counter = turn.ctx.runtime.counter(turn.ctx.facts.tokenizer)
    return counter.count(request.messages) + tool_tokens(request.tools, counter)


def without_tools(request: LLMRequest) -> LLMRequest:
    """`request` with no tools, its system prompt asking for edits as blocks."""
    return replace(request, tools=None, messages=[_blocks(m) for m in request.messages])


def _blocks(message: dict[str, Any]) -> dict[str, Any]:
    if message.get("role") != "system":
        return message
    content = message.get("content")
    if isinstance(content, str):
        return {**message, "content": content.replace(TOOLS_INSTRUCTION, BLOCKS_INSTRUCTION)}
    if isinstance(content, list):
        parts = [
            {**p, "text": p["text"].replace(TOOLS_INSTRUCTION, BLOCKS_INSTRUCTION)}
            if isinstance(p, dict) and isinstance(p.get("text"), str)
            else p
            for p in content
        ]
        return {**message, "content": parts}
    return message
