"""The one LLM adapter: `LiteLLMClient` implements contextcore's `LLMClient` with litellm.

litellm comes from `chat.llm.sdk` (lazily, with the offline models registered).
Invariants: callers see contextcore `LLMError`s, never provider exceptions; a request is
retried only before its first event was yielded, so no text is ever duplicated; every
request sent is appended to the ACDC_RECORD_REQUESTS file when one is given.
Non-goals: prompt assembly, cost accounting, persistence (see contextcore and history).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from chat.llm import sdk
from chat.llm.errors import map_error
from contextcore.llm import (
    LLMError,
    LLMRequest,
    StreamEnd,
    StreamEvent,
    StreamTimeoutError,
    TextDelta,
    ToolCallDelta,
    Usage,
    UsageReport,
)

OFFLINE_PREFIX = "acdc/"
# A Retry-After longer than this is not worth waiting for inside one turn: fail and say so.
MAX_RETRY_AFTER = 60.0


class LiteLLMClient:
    def __init__(
        self,
        *,
        api_base: str | None = None,
        record_path: Path | None = None,
        first_chunk_timeout: float = 60.0,
        between_chunks_timeout: float = 120.0,
        max_retries: int = 3,
        backoff_base: float = 1.0,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        self.api_base = api_base
        self.record_path = record_path
        self.first_chunk_timeout = first_chunk_timeout
        self.between_chunks_timeout = between_chunks_timeout
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self._sleep = sleep

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        attempt = 0
        while True:
            started = False
            try:
                async for event in self._attempt(request):
                    started = True
                    yield event
                return
            except LLMError as error:
                delay = self._retry_delay(error, attempt)
                if started or delay is None:
                    raise
            await self._sleep(delay)
            attempt += 1

    def _retry_delay(self, error: LLMError, attempt: int) -> float | None:
        """Seconds to wait before the next attempt, or None when it should not be retried."""
        if not error.retryable or attempt >= self.max_retries:
            return None
        retry_after = getattr(error, "retry_after", None)
        if retry_after is None:
            return self.backoff_base * 2**attempt
        return retry_after if retry_after <= MAX_RETRY_AFTER else None

    async def _attempt(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        # The first import takes seconds; on the event loop it would freeze every socket.
        litellm = await asyncio.to_thread(sdk.litellm)
        arguments = self._arguments(request)
        self._record(arguments)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.first_chunk_timeout
        response = None
        try:
            # One deadline covers both the request (headers) and the first chunk.
            call = litellm.acompletion(**arguments)
            limit = self.first_chunk_timeout
            response = await self._within(call, limit, request.model, limit)
            first_wait = max(0.0, deadline - loop.time())
            async for event in self._events(response, request.model, first_wait):
                yield event
        except LLMError:
            raise
        except Exception as exc:
            raise map_error(exc, request.model) from exc
        finally:
            await _close(response)

    async def _events(
        self, response: Any, model: str, first_wait: float
    ) -> AsyncIterator[StreamEvent]:
        """Text and tool-call deltas as they come, then the usage (when reported), then the end."""
        iterator = aiter(response)
        timeout, limit = first_wait, self.first_chunk_timeout
        usage: Usage | None = None
        finish_reason: str | None = None
        while True:
            try:
                chunk = await self._within(anext(iterator), timeout, model, limit)
            except StopAsyncIteration:
                break
            timeout = limit = self.between_chunks_timeout
            raw_usage = getattr(chunk, "usage", None)
            if raw_usage is not None:
                usage = normalize_usage(raw_usage)
            for choice in getattr(chunk, "choices", None) or []:
                finish_reason = getattr(choice, "finish_reason", None) or finish_reason
                for event in _delta_events(getattr(choice, "delta", None)):
                    yield event
        if usage is not None:
            yield UsageReport(usage)
        yield StreamEnd(finish_reason)

    async def _within(
        self, awaitable: Awaitable[Any], timeout: float, model: str, limit: float
    ) -> Any:
        """Await with `timeout` seconds left of a `limit` that the user message names."""
        try:
            # wait_for(..., 0) would not even start the awaitable.
            return await asyncio.wait_for(awaitable, max(timeout, 1e-3))
        except TimeoutError as exc:
            raise StreamTimeoutError(
                f"{model} sent nothing for {limit:g} seconds; the request was abandoned.",
                detail=repr(exc),
            ) from exc

    def _arguments(self, request: LLMRequest) -> dict[str, Any]:
        offline = request.model.startswith(OFFLINE_PREFIX)
        arguments: dict[str, Any] = {
            "model": request.model,
            "messages": request.messages,
            "stream": True,
            "stream_options": {"include_usage": True},
            # Retries are ours (they honour Retry-After and never repeat yielded text).
            "max_retries": 0,
        }
        if self.api_base and not offline:
            arguments["api_base"] = self.api_base
        if request.tools:
            arguments["tools"] = request.tools
        if request.max_tokens is not None:
            arguments["max_tokens"] = request.max_tokens
        if request.temperature is not None:
            arguments["temperature"] = request.temperature
        if offline and request.metadata:
            # Reaches the handler as litellm_params["metadata"]; never sent to a provider.
            arguments["metadata"] = request.metadata
        return arguments

    def _record(self, arguments: dict[str, Any]) -> None:
        if self.record_path is None:
            return
        line = {
            "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "model": arguments["model"],
            "messages": arguments["messages"],
            "tools": arguments.get("tools"),
        }
        with self.record_path.open("a", encoding="utf-8") as file:
            file.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")


def _delta_events(delta: Any) -> list[StreamEvent]:
    if delta is None:
        return []
    events: list[StreamEvent] = []
    text = getattr(delta, "content", None)
    if text:
        events.append(TextDelta(text))
    for position, call in enumerate(getattr(delta, "tool_calls", None) or []):
        function = getattr(call, "function", None)
        index = getattr(call, "index", None)
        events.append(
            ToolCallDelta(
                index=position if index is None else int(index),
                id=getattr(call, "id", None),
                name=getattr(function, "name", None),
                arguments=getattr(function, "arguments", None) or "",
            )
        )
    return events


def _field(source: Any, name: str) -> Any:
    if source is None:
        return None
    if isinstance(source, dict):
        return source.get(name)
    return getattr(source, name, None)


def normalize_usage(raw: Any) -> Usage:
    """Provider usage (a litellm Usage or a dict) as contextcore `Usage`.

    Anthropic reports `cache_read_input_tokens` / `cache_creation_input_tokens`; OpenAI
    and DeepSeek report reads as `prompt_tokens_details.cached_tokens`. litellm already
    counts cached tokens inside `prompt_tokens`; the max() guards a provider that does not.
    """
    details = _field(raw, "prompt_tokens_details")
    cache_read = _field(raw, "cache_read_input_tokens") or _field(details, "cached_tokens") or 0
    cache_write = (
        _field(raw, "cache_creation_input_tokens") or _field(details, "cache_write_tokens") or 0
    )
    prompt = _field(raw, "prompt_tokens") or 0
    return Usage(
        prompt_tokens=max(int(prompt), int(cache_read) + int(cache_write)),
        completion_tokens=int(_field(raw, "completion_tokens") or 0),
        cache_read_tokens=int(cache_read),
        cache_write_tokens=int(cache_write),
    )


async def _close(response: Any) -> None:
    close = getattr(response, "aclose", None)
    if close is None:
        return
    # Closing is best effort: the turn's outcome is already decided.
    with contextlib.suppress(Exception):
        await close()
