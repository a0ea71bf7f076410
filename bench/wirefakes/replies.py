"""What the fakes answer, in each provider's wire format: scripted replies and clocks.

`Reply` is one scripted answer (text and tool calls). `anthropic_message` and
`anthropic_events` write it as the Messages API does (a JSON message, or the SSE events
message_start, content_block_start/delta/stop, message_delta, message_stop); `openai_*`
as Chat Completions does (one JSON completion, or `data:` chunks, the usage chunk when
`stream_options.include_usage` asks for it, then `[DONE]`). `Clock` is the fakes' notion
of now: frozen and moved by the harness, or the wall clock plus an offset the harness
moves, so that lifetimes are tested without sleeping.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from bench.wirefakes.tokens import count


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Reply:
    text: str = "ok"
    tool_calls: tuple[ToolCall, ...] = ()

    @property
    def output_tokens(self) -> int:
        calls = sum(count(c.name + json.dumps(c.arguments)) for c in self.tool_calls)
        return max(1, count(self.text) + calls)


class Clock:
    """Seconds since the epoch as the fakes see them. `start=None` follows the wall clock
    (plus the offset `advance` adds); a number is a frozen clock that only `advance` and
    `set` move."""

    def __init__(self, start: float | None = None) -> None:
        self._frozen = start
        self._offset = 0.0
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            base = time.time() if self._frozen is None else self._frozen
            return base + self._offset

    def advance(self, seconds: float) -> float:
        with self._lock:
            self._offset += seconds
        return self.now()

    def set(self, at: float) -> float:
        with self._lock:
            base = time.time() if self._frozen is None else self._frozen
            self._offset = at - base
        return self.now()


def anthropic_content(reply: Reply, ids: str) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    for n, call in enumerate(reply.tool_calls):
        content.append(
            {
                "type": "tool_use",
                "id": f"toolu_{ids}_{n}",
                "name": call.name,
                "input": call.arguments,
            }
        )
    return content


def anthropic_message(reply: Reply, model: str, usage: dict[str, Any], ids: str) -> dict:
    return {
        "id": f"msg_{ids}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": anthropic_content(reply, ids),
        "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
        "stop_sequence": None,
        "usage": usage,
    }


def anthropic_events(reply: Reply, model: str, usage: dict[str, Any], ids: str) -> list[bytes]:
    """The SSE events of a streamed answer; usage in message_start, output in message_delta."""
    start = {**anthropic_message(reply, model, {**usage, "output_tokens": 1}, ids)}
    start.update(content=[], stop_reason=None)
    events: list[tuple[str, dict]] = [("message_start", {"message": start}), ("ping", {})]
    for index, block in enumerate(anthropic_content(reply, ids)):
        if block["type"] == "text":
            opened, deltas = {**block, "text": ""}, _text_deltas(block["text"])
        else:
            opened = {**block, "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
        events.append(("content_block_start", {"index": index, "content_block": opened}))
        events += [("content_block_delta", {"index": index, "delta": d}) for d in deltas]
        events.append(("content_block_stop", {"index": index}))
    stop = "tool_use" if reply.tool_calls else "end_turn"
    delta = {"delta": {"stop_reason": stop, "stop_sequence": None}}
    events.append(("message_delta", {**delta, "usage": {"output_tokens": usage["output_tokens"]}}))
    events.append(("message_stop", {}))
    return [
        f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode()
        for name, data in events
    ]


def _text_deltas(text: str, size: int = 40) -> list[dict[str, str]]:
    pieces = [text[i : i + size] for i in range(0, len(text), size)] or [""]
    return [{"type": "text_delta", "text": piece} for piece in pieces]


def openai_usage(prompt: int, cached: int, output: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": output,
        "total_tokens": prompt + output,
        "prompt_tokens_details": {"cached_tokens": cached},
    }


def _openai_tool_calls(reply: Reply, ids: str) -> list[dict[str, Any]]:
    return [
        {
            "index": n,
            "id": f"call_{ids}_{n}",
            "type": "function",
            "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
        }
        for n, call in enumerate(reply.tool_calls)
    ]


def openai_completion(reply: Reply, model: str, usage: dict[str, Any], ids: str) -> dict:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {k: v for k, v in call.items() if k != "index"}
            for call in _openai_tool_calls(reply, ids)
        ]
    finish = "tool_calls" if reply.tool_calls else "stop"
    return {
        "id": f"chatcmpl-{ids}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
    }


def openai_chunks(reply: Reply, model: str, usage: dict[str, Any] | None, ids: str) -> list[bytes]:
    """`data:` chunks of a streamed answer; the usage chunk only when `usage` is given."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {
            "id": f"chatcmpl-{ids}",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": model,
            "choices": [choice],
        }

    payloads = [chunk({"role": "assistant", "content": ""})]
    payloads += [chunk({"content": d["text"]}) for d in _text_deltas(reply.text) if d["text"]]
    if reply.tool_calls:
        payloads.append(chunk({"tool_calls": _openai_tool_calls(reply, ids)}))
    payloads.append(chunk({}, "tool_calls" if reply.tool_calls else "stop"))
    if usage is not None:
        payloads.append({**chunk({}), "choices": [], "usage": usage})
    lines = [json.dumps(p) for p in payloads] + ["[DONE]"]
    return [f"data: {line}\n\n".encode() for line in lines]
