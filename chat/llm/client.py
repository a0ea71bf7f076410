"""The one LLM adapter: `LiteLLMClient` implements contextcore's `LLMClient` with litellm.

litellm comes from `chat.llm.sdk` (lazily, with the offline models registered).
Invariants: callers see contextcore `LLMError`s, never provider exceptions; a request is
retried only before its first event was yielded (each retry announced by `Retrying`), so
no text is ever duplicated, and given up within `give_up_after` seconds; a stream that does
not raise ends with `StreamEnd` carrying the provider's own finish_reason (None when it
sent none); every request sent is appended to the ACDC_RECORD_REQUESTS file when one is given.
The providers `chat.llm.direct` covers are read without litellm's stream wrapper (same
events, pinned by a differential test); any other goes through `litellm.acompletion`,
said once per model in the log.
Non-goals: prompt assembly, cost accounting, persistence (see contextcore and history).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from chat.llm import sdk
from chat.llm.direct import DirectStream, plan
from chat.llm.errors import malformed_response, map_error, retry_reason
from chat.llm.loopclients import closed_at_loop_end
from chat.llm.usage import counted, keep_usage_chunks, merged, normalize_usage
from contextcore.llm import (
    LLMError,
    LLMRequest,
    Retrying,
    StreamEnd,
    StreamEvent,
    StreamTimeoutError,
    TextDelta,
    ToolCallDelta,
    Usage,
    UsageReport,
)

logger = logging.getLogger(__name__)

OFFLINE_PREFIX = "acdc/"
# An attempt with less time than this before the give-up deadline is not worth starting.
MIN_ATTEMPT_SECONDS = 1.0


class LiteLLMClient:
    """Streams through litellm; retries failures before the first token within a deadline.

    A request that has produced no chunk `give_up_after` seconds after it was first sent is
    abandoned, retries and backoff included. Each attempt waits `first_chunk_timeout`
    (default: half the deadline, so a silent provider is asked twice) and the last attempt
    waits out whatever time is left. A `Retrying` event announces every retry at once.
    """

    def __init__(
        self,
        *,
        api_base: str | None = None,
        record_path: Path | None = None,
        give_up_after: float = 60.0,
        first_chunk_timeout: float | None = None,
        between_chunks_timeout: float = 120.0,
        max_retries: int = 3,
        backoff_base: float = 1.0,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
        direct: bool = True,
    ) -> None:
        self.api_base = api_base
        self.record_path = record_path
        self.give_up_after = give_up_after
        self.first_chunk_timeout = (
            give_up_after / 2 if first_chunk_timeout is None else first_chunk_timeout
        )
        self.between_chunks_timeout = between_chunks_timeout
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self._sleep = sleep
        self._clock = clock
        # False sends every request through litellm's wrapper (the differential test's reference).
        self.direct = direct
        self._http: tuple[asyncio.AbstractEventLoop, Any, Any] | None = None  # litellm's handler
        self._wrapped: tuple[asyncio.AbstractEventLoop, Any] | None = None  # its closer
        self._fallen_back: set[str] = set()

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        # The first import takes seconds; on the event loop it would freeze every socket.
        # It is not the provider's time, so the deadline starts after it.
        litellm = await asyncio.to_thread(sdk.litellm)
        deadline = self._clock() + self.give_up_after
        attempt = 1
        while True:
            limit = self._attempt_limit(deadline, attempt)
            started = False
            try:
                async for event in self._attempt(litellm, request, limit):
                    started = True
                    yield event
                return
            except LLMError as error:
                delay = None if started else self._retry_delay(error, attempt, deadline)
                if delay is None:
                    if started or not isinstance(error, StreamTimeoutError):
                        raise
                    raise self._no_answer(request.model, error) from error
                reason = retry_reason(error)
            yield Retrying(reason, delay, attempt + 1, self.max_retries + 1)
            await self._sleep(delay)
            attempt += 1

    def _attempt_limit(self, deadline: float, attempt: int) -> float:
        """Seconds this attempt waits for its first chunk: all that is left if a retry after
        it timed out would not fit before the deadline."""
        remaining = max(0.0, deadline - self._clock())
        limit = min(self.first_chunk_timeout, remaining)
        room_after = remaining - limit - self._backoff(attempt)
        last = attempt > self.max_retries or room_after < MIN_ATTEMPT_SECONDS
        return remaining if last else limit

    def _retry_delay(self, error: LLMError, attempt: int, deadline: float) -> float | None:
        """Seconds to wait before the next attempt, or None when it should not be retried."""
        if not error.retryable or attempt > self.max_retries:
            return None
        retry_after = getattr(error, "retry_after", None)
        delay = self._backoff(attempt) if retry_after is None else retry_after
        if self._clock() + delay + MIN_ATTEMPT_SECONDS > deadline:
            return None
        return delay

    def _backoff(self, attempt: int) -> float:
        return self.backoff_base * 2 ** (attempt - 1)

    def _no_answer(self, model: str, last: StreamTimeoutError) -> StreamTimeoutError:
        return StreamTimeoutError(
            f"No answer from {model} in {self.give_up_after:g} s; try again or pick another model.",
            detail=last.detail,
        )

    async def _attempt(
        self, litellm: Any, request: LLMRequest, limit: float
    ) -> AsyncIterator[StreamEvent]:
        arguments = self._arguments(request)
        self._record(arguments)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit
        response = None
        try:
            # One deadline covers both the request (headers) and the first chunk.
            response = await self._within(
                self._open(litellm, arguments), limit, request.model, limit
            )
            kept = response if isinstance(response, DirectStream) else keep_usage_chunks(response)
            first_wait = max(0.0, deadline - loop.time())
            events = self._events(response, request.model, first_wait, limit)
            count = functools.partial(
                litellm.token_counter, model=request.model, count_response_tokens=True
            )
            async for event in counted(events, lambda text: count(text=text), kept):
                yield event
        except LLMError:
            raise
        except Exception as exc:
            raise map_error(exc, request.model) from exc
        finally:
            await _close(response)

    async def _open(self, litellm: Any, arguments: dict[str, Any]) -> Any:
        """The provider's stream: read directly when `chat.llm.direct` covers it, else
        through litellm's stream wrapper."""
        model = arguments["model"]
        offline = model.startswith(OFFLINE_PREFIX)
        call = plan(litellm, arguments) if self.direct and not offline else None
        if call is not None:
            return await DirectStream.open(litellm, await self._http_client(litellm), call)
        if self.direct and not offline and model not in self._fallen_back:
            self._fallen_back.add(model)
            logger.info("%s streams through litellm's stream wrapper (no direct reader)", model)
        await self._wrapper_client_closes_with_loop(litellm)
        return await litellm.acompletion(**arguments)

    async def _wrapper_client_closes_with_loop(self, litellm: Any) -> None:
        """litellm's module-level client (the wrapper's, for Anthropic) is closed on each
        loop that sent through it, as the loop ends (chat.llm.loopclients)."""
        loop = asyncio.get_running_loop()
        if self._wrapped is None or self._wrapped[0] is not loop:
            closer = closed_at_loop_end(lambda: vars(litellm).get("module_level_aclient"))
            await anext(closer)
            self._wrapped = (loop, closer)

    async def _http_client(self, litellm: Any) -> httpx.AsyncClient:
        """litellm's own HTTP client (its transport, aiohttp unless litellm is told
        otherwise, its proxies, TLS settings and headers), one per event loop (a pool
        cannot move between loops), closed when its loop shuts down. No timeouts of its
        own: the attempt's limits above are the only ones."""
        loop = asyncio.get_running_loop()
        if self._http is None or self._http[0] is not loop:
            handlers = litellm.llms.custom_httpx.http_handler
            handler = handlers.AsyncHTTPHandler(timeout=httpx.Timeout(None))
            held = _closed_with_its_loop(handler)
            await anext(held)
            self._http = (loop, handler, held)
        return self._http[1].client

    async def _events(
        self, response: Any, model: str, first_wait: float, limit: float
    ) -> AsyncIterator[StreamEvent]:
        """Text and tool-call deltas as they come, then the usage (when reported), then the end.

        A stream that ends with no answer and no finish_reason is no answer: it raises.
        """
        iterator = aiter(response)
        quiet = _Silence(first_wait)
        usage: Usage | None = None
        seen: str | None = None
        answered = False
        try:
            while True:
                try:
                    async with quiet:
                        chunk = await anext(iterator)
                except StopAsyncIteration:
                    break
                except TimeoutError as exc:
                    raise StreamTimeoutError(
                        f"{model} sent nothing for {limit:g} seconds; the request was abandoned.",
                        detail=repr(exc),
                    ) from exc
                quiet.limit = limit = self.between_chunks_timeout
                raw_usage = getattr(chunk, "usage", None)
                if raw_usage is not None:
                    usage = merged(usage, normalize_usage(raw_usage))
                for choice in getattr(chunk, "choices", None) or []:
                    seen = getattr(choice, "finish_reason", None) or seen
                    for event in _delta_events(getattr(choice, "delta", None)):
                        answered = True
                        yield event
        finally:
            quiet.close()
        finish_reason = provider_finish_reason(response, seen)
        if finish_reason is None and not answered:
            raise malformed_response(model, "the stream ended with no answer and no finish_reason")
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


class _Silence:
    """A limit on each wait for the next chunk (`async with`), raising TimeoutError as
    `asyncio.timeout` does, without a timer made and cancelled per chunk: one timer looks
    at the deadline when it falls due and, when a chunk came meanwhile, sets itself again
    for the new one. A timeout is only ever raised inside a wait, never while the reader
    is busy with the chunk it has."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self._deadline = 0.0
        self._scope: asyncio.Timeout | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def __aenter__(self) -> None:
        loop = self._loop = asyncio.get_running_loop()
        self._deadline = loop.time() + max(self.limit, 1e-3)
        self._scope = asyncio.timeout(None)
        await self._scope.__aenter__()
        if self._timer is not None and self._timer.when() > self._deadline:
            self.close()  # a shorter limit than the one the timer was set for
        if self._timer is None:
            self._timer = loop.call_at(self._deadline, self._due)

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        scope, self._scope = self._scope, None
        return await scope.__aexit__(*exc_info)

    def _due(self) -> None:
        self._timer = None
        if self._scope is None:  # not waiting: the next wait sets the timer again
            return
        if self._loop.time() < self._deadline:
            self._timer = self._loop.call_at(self._deadline, self._due)
        else:
            self._scope.reschedule(self._loop.time())  # expires the wait now

    def close(self) -> None:
        """No more waits: the timer goes."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def provider_finish_reason(response: Any, seen: str | None) -> str | None:
    """The finish_reason the provider sent, or None when it sent none.

    When a stream just ends (with or without `[DONE]`), litellm's stream wrapper makes up a
    last chunk with finish_reason "stop"; only the wrapper's own record says whether the
    provider said so: `received_finish_reason`, or `intermittent_finish_reason` for a
    provider that says it before its last event. `seen` is the (normalized) reason the
    chunks carried; it is all there is to go by for a stream that keeps no such record.
    """
    if not hasattr(response, "received_finish_reason"):
        return seen
    said = response.received_finish_reason or getattr(response, "intermittent_finish_reason", None)
    return (seen or str(said)) if said else None


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


async def _closed_with_its_loop(handler: Any) -> AsyncIterator[None]:
    """Parks once started, until its loop shuts down: asyncio.run and the loop runners
    close a loop's async generators while it still runs, so the handler's connections are
    closed on the loop they belong to. Left to the garbage collector after the loop has
    closed, an aiohttp pool cannot close its sockets (ResourceWarning: unclosed socket)."""
    try:
        yield
    finally:
        await handler.close()


async def _close(response: Any) -> None:
    close = getattr(response, "aclose", None)
    if close is None:
        return
    # Closing is best effort: the turn's outcome is already decided.
    with contextlib.suppress(Exception):
        await close()
