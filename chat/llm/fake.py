"""The script that drives `acdc/fake`, and the prompt-cache simulation both offline models share.

`FakeScript` hands out one `FakeStep` per request: steps enqueued in-process first, then the
steps of the JSON file named by ACDC_FAKE_SCRIPT (re-read whenever the file changes, so a
browser test can script a server running in another process), then a deterministic echo.
It records every request it receives. `PrefixCache` is the cache simulator both offline
models bill through, tools included, as the provider they stand in for would.
Plain Python: no litellm, no Django.
"""

from __future__ import annotations

import json
import os
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contextcore.prompt.cacherules import ANTHROPIC
from contextcore.prompt.cachesim import CacheSimulator, RequestCost
from contextcore.tokens import TokenCounter

DEFAULT_CHUNK_SIZE = 12
ECHO_PREFIX = "Fake reply to: "
ECHO_LIMIT = 200
# Requests whose answer is kept as the conversation's summary: unscripted, they get no text.
UNECHOED_PURPOSES = ("history_summary", "managed_view")

# The error kinds a step may raise; chat.llm.offline turns each into the litellm exception a
# real provider would produce.
ERROR_KINDS = (
    "rate_limit",
    "auth",
    "server",
    "unavailable",
    "connection",
    "timeout",
    "bad_request",
    "context_window",
    "not_found",
)


@dataclass(frozen=True)
class FakeStep:
    """One scripted reply.

    `chunk_delay` is slept before every chunk, the first included. `error` is raised after
    `error_after` chunks (0: before any text). `tool_calls` items are dicts with `name`,
    `arguments` (a string or a JSON-able value) and optionally `id` (without one, the call
    gets an id no other call of the script has). `usage` overrides
    any of the reported usage fields. `finish_reason` replaces the usual "stop" (or
    "tool_calls"); `cut` ends the stream after the text and tool calls with no finish_reason
    and no usage, as a provider that closes the stream early.
    """

    text: str = ""
    chunk_size: int | None = None
    chunk_delay: float | None = None
    error: str | None = None
    error_after: int = 0
    retry_after: float | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    finish_reason: str | None = None
    cut: bool = False
    # Only for requests made for this purpose ("topic_detection", "history_summary",
    # "endless_view", ...); untagged steps answer any request no tagged step is waiting for.
    purpose: str | None = None

    def __post_init__(self) -> None:
        if self.error is not None and self.error not in ERROR_KINDS:
            raise ValueError(f"unknown fake error kind {self.error!r}; use one of {ERROR_KINDS}")

    @classmethod
    def parse(cls, raw: str | Mapping[str, Any] | FakeStep) -> FakeStep:
        if isinstance(raw, FakeStep):
            return raw
        if isinstance(raw, str):
            return cls(text=raw)
        known = set(cls.__dataclass_fields__)
        unknown = set(raw) - known
        if unknown:
            raise ValueError(f"unknown fake step fields {sorted(unknown)}")
        return cls(**dict(raw))


@dataclass(frozen=True)
class FakeRequest:
    """What the fake received: the messages exactly as litellm handed them over."""

    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    kwargs: dict[str, Any]
    metadata: dict[str, Any]


class FakeScript:
    def __init__(
        self, *, script_file: Path | None = None, default_chunk_delay: float = 0.0
    ) -> None:
        self.script_file = script_file
        self.default_chunk_delay = default_chunk_delay
        self.requests: list[FakeRequest] = []
        self.cache = PrefixCache()
        self._queue: deque[FakeStep] = deque()
        self._file_signature: tuple[int, int] | None = None
        self._file_steps: list[FakeStep] = []
        self._file_used: set[int] = set()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> FakeScript:
        """ACDC_FAKE_SCRIPT=FILE (a JSON list of steps), ACDC_FAKE_CHUNK_DELAY=SECONDS."""
        environ = os.environ if environ is None else environ
        path = environ.get("ACDC_FAKE_SCRIPT")
        delay = float(environ.get("ACDC_FAKE_CHUNK_DELAY") or 0.0)
        return cls(script_file=Path(path) if path else None, default_chunk_delay=delay)

    def enqueue(self, *steps: str | Mapping[str, Any] | FakeStep) -> None:
        self._queue.extend(FakeStep.parse(step) for step in steps)

    def next_step(self, messages: list[dict[str, Any]], purpose: str | None = None) -> FakeStep:
        """The first waiting step tagged with this request's purpose, else the first
        untagged one (queued steps before the file's), else an echo."""
        index = _pick(self._queue, purpose)
        if index is not None:
            step = self._queue[index]
            del self._queue[index]
            return step
        file_step = self._next_file_step(purpose)
        if file_step is not None:
            return file_step
        if purpose in UNECHOED_PURPOSES:  # an echo stored as a summary would be nonsense
            return FakeStep(text="")
        return FakeStep(text=echo_reply(messages))

    def chunk_delay(self, step: FakeStep) -> float:
        return self.default_chunk_delay if step.chunk_delay is None else step.chunk_delay

    def _next_file_step(self, purpose: str | None = None) -> FakeStep | None:
        if self.script_file is None:
            return None
        try:
            stat = self.script_file.stat()
        except OSError:
            return None
        signature = (stat.st_mtime_ns, stat.st_size)
        if signature != self._file_signature:
            # A rewritten file is a new script: start again from its first step.
            raw = json.loads(self.script_file.read_text(encoding="utf-8"))
            if not isinstance(raw, list):
                raise ValueError(f"{self.script_file} must hold a JSON list of steps")
            self._file_steps = [FakeStep.parse(item) for item in raw]
            self._file_used = set()
            self._file_signature = signature
        waiting = [s for i, s in enumerate(self._file_steps) if i not in self._file_used]
        index = _pick(waiting, purpose)
        if index is None:
            return None
        step = waiting[index]
        self._file_used.add(next(i for i, s in enumerate(self._file_steps) if s is step))
        return step


def _pick(steps: Sequence[FakeStep], purpose: str | None) -> int | None:
    """Index of the step that answers a request made for `purpose`."""
    if purpose is not None:
        for index, step in enumerate(steps):
            if step.purpose == purpose:
                return index
    for index, step in enumerate(steps):
        if step.purpose is None:
            return index
    return None


def echo_reply(messages: list[dict[str, Any]]) -> str:
    return ECHO_PREFIX + last_user_text(messages)[:ECHO_LIMIT]


def last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return content_text(message.get("content"))
    return ""


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        ]
        return "\n".join(parts)
    return ""


def has_cache_control(message: Mapping[str, Any]) -> bool:
    if "cache_control" in message:
        return True
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(block, dict) and "cache_control" in block for block in content
    )


def breakpoint_indexes(messages: list[dict[str, Any]]) -> list[int]:
    return [i for i, message in enumerate(messages) if has_cache_control(message)]


class PrefixCache:
    """The offline models' prompt cache: `contextcore.prompt.cachesim` under the rules of
    the model they stand in for (Anthropic's explicit breakpoints: tools, then system,
    then messages; 20-block look-back; the 1,024-token minimum; lifetimes renewed on
    read), on the wall clock. So what the page reports is what that provider would bill.
    """

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.simulator = CacheSimulator(TokenCounter("cl100k_base"), ANTHROPIC)
        self.clock = clock

    def lookup(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> RequestCost:
        """What the request costs (prompt, cache read and cache write tokens); the cache
        remembers its prefixes."""
        return self.simulator.request(messages, self.clock(), tools=tools)
