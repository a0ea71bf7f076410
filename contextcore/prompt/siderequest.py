"""Requests that reuse the chat's cache: the chat's request plus an instruction.

A provider's cached prefix starts with the tool definitions, then the system blocks, then
the messages (Anthropic documents that order; OpenAI's automatic cache keys on the same
prefix). A side request (topic detector, summarizer, Endless manager) or a keep-alive
refresh can read what the chat wrote only if it repeats all of it byte for byte: the same
tools, the same tool choice (the chat sends none, so neither does this), the same system
blocks and messages up to the chat's last cache breakpoint. `chat_plus` is the one
function that builds such a request; its own instruction goes after the prefix and tells
the model not to call tools, since the tools are there only to keep the prefix identical.
Non-goals: deciding whether reuse is worth it (`history.topics.side_request`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from contextcore.llm import LLMRequest, Message
from contextcore.tokens import TokenCounter

REFRESH_PURPOSE = "keepalive"  # the request's metadata purpose; the offline models answer "."
REFRESH_NOTE = (
    "(This request only keeps the conversation cached while the person is away; no answer "
    "is needed. Reply with a single period.)"
)
NO_TOOLS_NOTE = (
    "Answer in plain text and do not call any tool: the tools above are listed only so that "
    "this request repeats the conversation exactly, and a tool call here would be ignored."
)


@dataclass(frozen=True)
class SidePrefix:
    """The chat's request as it will be sent, up to its last cache breakpoint, with the
    tool definitions it carries, and the price of reading it from the provider's cache
    (a multiple of the input price)."""

    messages: tuple[Message, ...]
    read_price: float
    tools: tuple[dict[str, Any], ...] = ()

    def tokens(self, counter: TokenCounter) -> int:
        """What the prefix counts, tool definitions included."""
        return counter.count(list(self.messages)) + tool_tokens(self.tools, counter)


def tool_tokens(tools: Sequence[dict[str, Any]] | None, counter: TokenCounter) -> int:
    """What tool definitions count in a request (`TokenCounter.count_tool`, summed)."""
    return sum(counter.count_tool(tool) for tool in tools or ())


def chat_plus(
    prefix: SidePrefix,
    model: str,
    instruction: str,
    *,
    max_tokens: int | None = None,
    temperature: float | None = None,
    metadata: dict[str, Any] | None = None,
) -> LLMRequest:
    """The chat's prefix, then `instruction` (and the no-tools note) as one user message."""
    tail = {"role": "user", "content": f"{instruction}\n\n{NO_TOOLS_NOTE}"}
    return LLMRequest(
        model=model,
        messages=[*prefix.messages, tail],
        tools=list(prefix.tools) or None,
        max_tokens=max_tokens,
        temperature=temperature,
        metadata=dict(metadata or {}),
    )


def refresh_request(prefix: SidePrefix | None, model: str) -> LLMRequest | None:
    """A keep-alive refresh: the chat's request (reading its prefix renews its lifetime)
    plus a note that no answer is wanted; None when nothing is cached."""
    if prefix is None:
        return None
    metadata = {"purpose": REFRESH_PURPOSE}
    return chat_plus(prefix, model, REFRESH_NOTE, max_tokens=1, metadata=metadata)
