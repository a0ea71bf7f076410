"""The LLM seam: the protocol every model client implements, and its value types.

contextcore defines what a request, a stream event and a provider error look like; the one
adapter in `chat.llm.client` implements `LLMClient` with litellm. Nothing outside that adapter
knows which provider answers. Messages are plain dicts in the OpenAI chat shape (what
litellm accepts), because that is also what prompt caches key on: byte-for-byte.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

Message = dict[str, Any]


@dataclass(frozen=True)
class Usage:
    """Provider-reported token usage, normalized across providers.

    `prompt_tokens` counts every input token, including those read from or written to
    the cache; the cache fields say how many of them were.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        """Two requests' usage together (a tool loop's rounds are billed one by one)."""
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )

    def as_dict(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
        }


@dataclass(frozen=True)
class LLMRequest:
    model: str
    messages: list[Message]
    tools: list[dict[str, Any]] | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    # Free-form annotations for the offline providers (the dry-run report reads them);
    # never sent to a real provider.
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class UsageReport:
    usage: Usage


@dataclass(frozen=True)
class ToolCallDelta:
    """A (possibly partial) tool call; `arguments` arrives in pieces like text."""

    index: int
    id: str | None
    name: str | None
    arguments: str


@dataclass(frozen=True)
class StreamEnd:
    """The last event of every stream that did not raise: how the provider ended it.

    `finish_reason` is what the provider said ("stop", "length", "tool_calls", ...), or
    None when it closed the stream without saying it had finished: the answer may be cut.
    """

    finish_reason: str | None = None


@dataclass(frozen=True)
class Retrying:
    """The request failed before its first token and is sent again after `delay` seconds.

    `reason` is written for the page ("Rate limited"); `attempt` numbers the attempt to
    come, the first request being attempt 1; `attempts` the most the client makes (0 when
    it does not say). Only ever yielded before any other event.
    """

    reason: str
    delay: float
    attempt: int
    attempts: int = 0


StreamEvent = TextDelta | UsageReport | ToolCallDelta | StreamEnd | Retrying


@runtime_checkable
class LLMClient(Protocol):
    """Streams one completion. Raises `LLMError` subclasses, never provider exceptions."""

    def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]: ...


class LLMError(Exception):
    """Base of every error a model client raises. `user_message` is safe to show."""

    retryable = False

    def __init__(self, user_message: str, *, detail: str = "", status: int | None = None) -> None:
        super().__init__(user_message)
        self.user_message = user_message
        self.detail = detail
        # The provider's HTTP status, when it answered with one.
        self.status = status


class UnknownModelError(LLMError):
    pass


class AuthenticationError(LLMError):
    pass


class BadRequestError(LLMError):
    pass


class ContextWindowExceededError(BadRequestError):
    pass


class RateLimitError(LLMError):
    retryable = True

    def __init__(
        self,
        user_message: str,
        *,
        retry_after: float | None = None,
        detail: str = "",
        status: int | None = None,
    ) -> None:
        super().__init__(user_message, detail=detail, status=status)
        self.retry_after = retry_after


class ProviderUnavailableError(LLMError):
    retryable = True


class StreamTimeoutError(LLMError):
    retryable = True


class MalformedResponseError(LLMError):
    """The provider answered with something that is not a chat-completion stream."""
