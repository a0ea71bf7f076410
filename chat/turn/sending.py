"""A server that refuses tools: the turn's request is sent once more without them.

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
from contextcore.llm import LLMClient, LLMError, LLMRequest

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
        return await one(turn, request, client, state), request
    except LLMError as exc:
        if not request.tools or not refuses_tools(exc):
            raise
    turn.ctx.runtime.refuse_tools(request.model)
    turn.ctx.tools = None  # the turn's side requests repeat the chat's tools
    await turn.emit(TurnNotice(turn.turn_id, refused_notice(request.model), "warning"))
    plain = without_tools(request)
    return await one(turn, plain, client, state), plain


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
