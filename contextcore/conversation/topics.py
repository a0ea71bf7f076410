"""Topic boundary detection: where did the conversation move on to a new task?

`TopicDetector` shows a smaller model the most recent messages as indexed blocks
(`[N] ROLE: content`, each cut to `max_chars`, at most `max_messages` of them; N is the
message's index in the full list, so a boundary can be applied to it directly) and asks
for JSON `{boundary_index, boundary_reason, confidence, summary}`. Invariant: it never
raises for a model's answer or failure -- anything it cannot trust becomes
`SAFE_BOUNDARY` (no boundary, confidence 0.0), which makes the compactor summarize
rather than drop. Non-goal: deciding what to do with the boundary (`compaction`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from contextcore.llm import LLMClient, LLMError, LLMRequest, Message, TextDelta, ToolCallDelta
from contextcore.modeljson import parse_json_output
from contextcore.prompt.siderequest import SidePrefix, chat_plus
from contextcore.tokens import TokenCounter

log = logging.getLogger(__name__)

MAX_CHARS = 1000
MAX_MESSAGES = 50
DETECTOR_MAX_TOKENS = 400

DETECTOR_PROMPT = """\
You find topic boundaries in a conversation between a user and a coding assistant.
The messages are numbered blocks "[N] ROLE: content" (long messages are cut short).
A boundary is the first message of a NEW topic: an explicit task switch ("now let's work
on..."), a shift to a different file or component, a change in the kind of work (for
example debugging -> feature development), or a context reset ("forget that", "let's try
something else"). Pick the most recent boundary; use null when there is none.
Answer with one JSON object and nothing else:
{"boundary_index": <N or null>, "boundary_reason": "<short reason>",
 "confidence": <0.0 to 1.0>, "summary": "<two sentences on what came before the boundary>"}"""

_INDEX = re.compile(r'"boundary_index"\s*:\s*(null|-?\d+)')
_CONFIDENCE = re.compile(r'"confidence"\s*:\s*(-?\d+(?:\.\d+)?)')
_STRING_FIELD = r'"{}"\s*:\s*"((?:[^"\\]|\\.)*)"'


@dataclass(frozen=True)
class TopicBoundary:
    boundary_index: int | None
    boundary_reason: str
    confidence: float
    summary: str


SAFE_BOUNDARY = TopicBoundary(None, "", 0.0, "")


def message_text(message: Message) -> str:
    """The text of a message; text blocks of multimodal content joined, images left out."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b.get("text", "") for b in content if isinstance(b, dict)]
        return "\n".join(p for p in parts if isinstance(p, str) and p)
    return ""


SIDE_NOTE = (
    "This request is a side task about the conversation above; it is not a message to "
    "answer. The messages it refers to are listed by number, cut short; their full text "
    "is above."
)
INDEX_CHARS = 200


def side_request(
    prefix: SidePrefix | None,
    system: str,
    *,
    index: str,
    transcript: str,
    counter: TokenCounter | None,
    model: str,
    max_tokens: int | None = None,
    temperature: float | None = None,
    metadata: dict[str, Any] | None = None,
) -> LLMRequest:
    """A side request: the chat's request (`prefix`, tools included) plus the instruction
    and a short `index` of the messages, when reading the prefix from the cache costs less
    than sending the `transcript` fresh; else a request of its own, with no tools."""
    options: dict[str, Any] = {
        "max_tokens": max_tokens,
        "temperature": temperature,
        "metadata": dict(metadata or {}),
    }
    fresh = [{"role": "system", "content": system}, {"role": "user", "content": transcript}]
    if prefix is not None and prefix.messages and counter is not None:
        instruction = f"{SIDE_NOTE}\n\n{system}\n\n{index}"
        reuse = chat_plus(prefix, model, instruction, **options)
        cost = prefix.read_price * prefix.tokens(counter) + counter.count(reuse.messages[-1:])
        if cost < counter.count(fresh):
            return reuse
    return LLMRequest(model=model, messages=fresh, **options)


def format_messages(
    messages: Sequence[Message], *, max_chars: int = MAX_CHARS, start: int = 0
) -> str:
    """Messages as `[N] ROLE: content` blocks, N counted from `start`, content cut to
    `max_chars` characters with "..." marking the cut."""
    blocks = []
    for offset, message in enumerate(messages):
        text = message_text(message)
        if len(text) > max_chars:
            text = text[:max_chars] + "..."
        role = str(message.get("role", "unknown")).upper()
        blocks.append(f"[{start + offset}] {role}: {text}")
    return "\n\n".join(blocks)


def parse_boundary(text: str, *, first_index: int = 0, count: int | None = None) -> TopicBoundary:
    """A `TopicBoundary` from a model's answer: clean JSON, JSON in a markdown fence or
    amid prose, else the fields a regex can find (truncated JSON). A boundary index outside
    `first_index`..`count`-1 becomes None; see `_confidence` for the confidence rules."""
    data = parse_json_output(text)
    if data is None:
        data = _regex_fields(text)
    if data is None:
        return SAFE_BOUNDARY
    index = data.get("boundary_index")
    valid = isinstance(index, int) and not isinstance(index, bool)
    if valid and (index < first_index or (count is not None and index >= count)):
        valid = False
    reason, summary = data.get("boundary_reason"), data.get("summary")
    return TopicBoundary(
        boundary_index=index if valid else None,
        boundary_reason=reason if isinstance(reason, str) else "",
        confidence=_confidence(data.get("confidence")),
        summary=summary if isinstance(summary, str) else "",
    )


def _regex_fields(text: str) -> dict[str, Any] | None:
    index, confidence = _INDEX.search(text), _CONFIDENCE.search(text)
    if index is None and confidence is None:
        return None
    data: dict[str, Any] = {
        "boundary_index": int(index.group(1)) if index and index.group(1) != "null" else None,
        "confidence": float(confidence.group(1)) if confidence else 0.0,
    }
    for name in ("boundary_reason", "summary"):
        found = re.search(_STRING_FIELD.format(name), text)
        if found:
            try:
                data[name] = json.loads(f'"{found.group(1)}"')
            except ValueError:
                data[name] = found.group(1)
    return data


def _confidence(value: Any) -> float:
    """Numbers (or numeric strings) clamped to 0..1, so 7 means 1.0; anything else ("high",
    null, true, NaN) is 0.0 -- a word is not a measurement."""
    if isinstance(value, bool):
        return 0.0
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return 0.0
    if not isinstance(value, int | float) or math.isnan(value):
        return 0.0
    return min(1.0, max(0.0, float(value)))


async def complete_text(client: LLMClient, request: LLMRequest, timeout: float) -> str:
    """The whole text of one streamed completion; raises `TimeoutError` past `timeout`.
    A side request carries the chat's tools only to repeat its prefix: a tool call in the
    answer is ignored (and logged), the text is all that counts."""
    parts: list[str] = []
    async with asyncio.timeout(timeout):
        async for event in client.stream(request):
            if isinstance(event, TextDelta):
                parts.append(event.text)
            elif isinstance(event, ToolCallDelta) and event.name:
                log_ignored_tool_call(request, event.name)
    return "".join(parts)


def log_ignored_tool_call(request: LLMRequest, name: str) -> None:
    purpose = request.metadata.get("purpose", "side request")
    log.warning("%s asked for tool %r; ignored (a side request only reads)", purpose, name)


class TopicDetector:
    def __init__(
        self,
        client: LLMClient,
        model: str,
        counter: TokenCounter | None = None,
        *,
        max_chars: int = MAX_CHARS,
        max_messages: int = MAX_MESSAGES,
        timeout: float = 30.0,
    ) -> None:
        self.client, self.model, self.counter = client, model, counter
        self.max_chars, self.max_messages, self.timeout = max_chars, max_messages, timeout

    def request_for(
        self, messages: Sequence[Message], prefix: SidePrefix | None = None
    ) -> LLMRequest:
        """The detector request: the most recent `max_messages` messages, numbered by
        their index in `messages` (cut shorter after the chat's `prefix` when that is
        reused, since it holds them in full)."""
        start = max(0, len(messages) - self.max_messages)
        recent = messages[start:]
        return side_request(
            prefix,
            DETECTOR_PROMPT,
            index=format_messages(recent, max_chars=INDEX_CHARS, start=start),
            transcript=format_messages(recent, max_chars=self.max_chars, start=start),
            counter=self.counter,
            model=self.model,
            max_tokens=DETECTOR_MAX_TOKENS,
            temperature=0.0,
            metadata={"purpose": "topic_detection"},
        )

    async def detect(
        self, messages: Sequence[Message], prefix: SidePrefix | None = None
    ) -> TopicBoundary:
        """The most recent topic boundary, or `SAFE_BOUNDARY` when there are no messages,
        no model, or the model fails, times out or answers something unusable."""
        if not messages or not self.model:
            return SAFE_BOUNDARY
        request = self.request_for(messages, prefix)
        try:
            answer = await complete_text(self.client, request, self.timeout)
        except (LLMError, TimeoutError):
            return SAFE_BOUNDARY
        first = max(0, len(messages) - self.max_messages)
        return parse_boundary(answer, first_index=first, count=len(messages))
