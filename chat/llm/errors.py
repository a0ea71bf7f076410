"""Provider exceptions, as litellm raises them, mapped to contextcore's `LLMError` classes.

Every mapped error carries a `user_message` written for the chat page (what happened and
what to do), the provider's HTTP status when it sent one, and the provider's text,
shortened, in `detail` for logs. Rate limits carry the provider's Retry-After. Classes are
matched by name along the exception's class hierarchy, so this module never imports litellm.
A provider that could not be reached (DNS, refused, timed-out connection) is said to be
unreachable, and why, whatever status litellm gave it. `retry_reason` says in a few words
why a request is being sent again; `refuses_tools` whether a refused request was refused
for the tools it offered.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from contextcore.llm import (
    AuthenticationError,
    BadRequestError,
    ContextWindowExceededError,
    LLMError,
    MalformedResponseError,
    ProviderUnavailableError,
    RateLimitError,
    StreamTimeoutError,
    UnknownModelError,
)

DETAIL_LIMIT = 500
_MISSING_KEY_HINTS = ("missing credentials", "api_key client option must be set")
_UNKNOWN_PROVIDER_HINTS = ("llm provider not provided", "unmapped llm provider")
# What litellm raised from, when reading the provider's answer failed rather than the network.
_UNREADABLE = ("JSONDecodeError", "TypeError", "KeyError", "AttributeError", "ValidationError")
# Errors without an HTTP answer; litellm still gives them a status_code (500).
_NO_ANSWER = ("APIConnectionError", "Timeout")

# Why a connection failed, from the exceptions litellm raised from (httpx, aiohttp, socket):
# litellm reports all of these as an InternalServerError with status 500.
_CONNECT_FAILURES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("gaierror", "ClientConnectorDNSError"), "its host name could not be resolved (DNS)"),
    (("ConnectionRefusedError",), "the connection was refused"),
    (("ConnectTimeout", "ServerTimeoutError"), "the connection timed out"),
    (("ConnectError", "ClientConnectorError", "ConnectionError"), "the connection failed"),
)
_HOST = re.compile(r"connect to host ([^\s:]+)")

Builder = Callable[[Exception, str, str], LLMError]

# A server that takes no tools answers 400 (vLLM, llama.cpp, LM Studio), 422 (a strict
# schema) or 404/501 naming the field; litellm refuses `tools` itself for a provider it
# knows takes none (UnsupportedParamsError, a 400). The text names the field and a refusal.
_TOOLS_WORDS = re.compile(r"\btool|\bfunction")
_REFUSAL_WORDS = re.compile(
    r"support|requires?\b|not allowed|not permitted|unrecognized|unrecognised|unknown"
    r"|extra|unexpected|invalid|enable|forbidden"
)
# About the tool messages of a round, not about offering tools.
_TOOL_MESSAGE_WORDS = ("tool_call_id", "tool call id", "tool_calls must", "tool message")
_REFUSAL_STATUSES = (400, 404, 422, 501)


def map_error(exc: Exception, model: str) -> LLMError:
    """The contextcore error for any exception raised while calling `model`."""
    original = _unwrap(exc)
    detail = str(original)[:DETAIL_LIMIT]
    if _is_any(original, ("APIConnectionError",)) and _raised_from(exc, _UNREADABLE):
        return malformed_response(model, detail)
    unreachable = _unreachable(exc, original, model, detail)
    if unreachable is not None:
        return unreachable
    error = _build(original, model, detail)
    error.status = _status(original)
    return error


def retry_reason(error: LLMError) -> str:
    """Why `error` makes the client try again, for the page and the terminal: "Rate limited
    by the provider; retrying in 3 s"."""
    if isinstance(error, RateLimitError):
        return "Rate limited by the provider"
    if isinstance(error, StreamTimeoutError):
        return "No answer from the provider yet"
    why = getattr(error, "unreachable", None)
    if why:
        return f"Could not reach the provider: {why}"
    if error.status is not None:
        return f"The provider returned an error ({error.status})"
    return "Could not reach the provider"


def refuses_tools(error: LLMError) -> bool:
    """Whether a request that offered tools was refused for offering them: a client error
    whose text names tools or functions and a refusal ("does not support tools", "\"auto\"
    tool choice requires --enable-auto-tool-choice", "Extra inputs are not permitted:
    tools"), and not the tool messages of a round."""
    if error.status not in _REFUSAL_STATUSES and not isinstance(error, BadRequestError):
        return False
    text = (error.detail or error.user_message).lower()
    if any(words in text for words in _TOOL_MESSAGE_WORDS):
        return False
    return bool(_TOOLS_WORDS.search(text) and _REFUSAL_WORDS.search(text))


def _unreachable(exc: Exception, original: Exception, model: str, detail: str) -> LLMError | None:
    """The error for a provider that was never reached, or None when it answered (or timed
    out answering: that is `_timeout`'s). `unreachable` on it says why, for `retry_reason`."""
    if _is_any(original, ("Timeout", "RateLimitError", "AuthenticationError", "BadRequestError")):
        return None
    why = next((why for names, why in _CONNECT_FAILURES if _raised_from(exc, names)), None)
    if why is None and _is_any(original, ("APIConnectionError",)) and not _provider_said(exc):
        why = "the connection failed"
    if why is None:
        return None
    host = _host(exc)
    where = f" at {host}" if host else ""
    error = ProviderUnavailableError(
        f"Could not reach the provider of {model}{where}: {why}. "
        "Check the network connection (and ACDC_API_BASE, if it is set), then try again.",
        detail=detail,
    )
    error.unreachable = why
    return error


def _provider_said(exc: Exception) -> bool:
    """Whether the provider itself sent the error, as an event in its stream: the openai
    SDK raises a plain `APIError` for it, which litellm reports as a connection error."""
    return any(type(cause).__name__ == "APIError" for cause in _causes(exc))


def _host(exc: Exception) -> str | None:
    """The host that could not be reached: named in the message (aiohttp), or the host of
    the request an httpx error carries."""
    found = next(filter(None, (_HOST.search(str(c)) for c in [exc, *_causes(exc)])), None)
    if found:
        return found.group(1)
    for cause in _causes(exc):
        if not _is_any(cause, ("TransportError",)):  # httpx's, which knows its request
            continue
        try:
            return str(cause.request.url.host) or None  # type: ignore[attr-defined]
        except (AttributeError, RuntimeError):  # httpx raises RuntimeError when unset
            continue
    return None


def _build(exc: Exception, model: str, detail: str) -> LLMError:
    for class_names, builder in _TABLE:
        if _is_any(exc, class_names):
            return builder(exc, model, detail)
    return LLMError(
        f"The call to {model} failed unexpectedly ({type(exc).__name__}).", detail=detail
    )


def malformed_response(model: str, detail: str = "") -> LLMError:
    return MalformedResponseError(
        f"{model} answered with something that is not a chat-completion stream. "
        "Check the API base (ACDC_API_BASE), try again, or pick another model.",
        detail=detail,
    )


def _status(exc: Exception) -> int | None:
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int) or _is_any(exc, _NO_ANSWER):
        return None
    return status


def _raised_from(exc: BaseException, class_names: tuple[str, ...]) -> bool:
    """Whether the causes behind `exc` (through litellm's wrappers too) hold one of them."""
    return any(_is_any(cause, class_names) for cause in _causes(exc))


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """The exceptions `exc` was raised from, through litellm's `original_exception` too."""
    seen: set[int] = set()
    waiting: list[BaseException | None] = [exc.__cause__, exc.__context__]
    waiting.append(getattr(exc, "original_exception", None))
    while waiting:
        cause = waiting.pop()
        if not isinstance(cause, BaseException) or id(cause) in seen:
            continue
        yield cause
        seen.add(id(cause))
        waiting += [cause.__cause__, cause.__context__, getattr(cause, "original_exception", None)]


def _unwrap(exc: Exception) -> Exception:
    # litellm wraps errors raised while streaming in MidStreamFallbackError (a 503) even
    # when they happened before the first chunk; the original says what really went wrong.
    while type(exc).__name__ == "MidStreamFallbackError":
        original = getattr(exc, "original_exception", None)
        if not isinstance(original, Exception):
            break
        exc = original
    return exc


def _is_any(exc: BaseException, class_names: tuple[str, ...]) -> bool:
    # By name along the class hierarchy: litellm's exception classes subclass each other and
    # the openai ones, and matching names keeps this module free of the litellm import.
    return any(cls.__name__ in class_names for cls in type(exc).__mro__)


def _context_window(exc: Exception, model: str, detail: str) -> LLMError:
    return ContextWindowExceededError(
        f"The request is larger than {model}'s context window. "
        "Deselect some files or start a new session.",
        detail=detail,
    )


def _content_policy(exc: Exception, model: str, detail: str) -> LLMError:
    return BadRequestError(f"{model} refused the request under its content policy.", detail=detail)


def _bad_request(exc: Exception, model: str, detail: str) -> LLMError:
    lowered = detail.lower()
    if any(hint in lowered for hint in _UNKNOWN_PROVIDER_HINTS):
        return _unknown_model(exc, model, detail)
    if any(hint in lowered for hint in _MISSING_KEY_HINTS):
        return _authentication(exc, model, detail)
    return BadRequestError(f"{model} rejected the request: {_first_line(detail)}", detail=detail)


def _unknown_model(exc: Exception, model: str, detail: str) -> LLMError:
    if model.startswith("acdc/"):
        return UnknownModelError(
            f"Unknown model {model!r}: the offline models are acdc/dry-run and acdc/fake.",
            detail=detail,
        )
    return UnknownModelError(
        f"Unknown model {model!r}. Use a litellm model name such as "
        "'anthropic/claude-sonnet-4-5' or 'openai/gpt-4.1', or the offline 'acdc/dry-run'.",
        detail=detail,
    )


def _authentication(exc: Exception, model: str, detail: str) -> LLMError:
    return AuthenticationError(
        f"{model} did not accept the API key (or none is set). Set the provider's key, "
        "for example ANTHROPIC_API_KEY or OPENAI_API_KEY, and restart acdc.",
        detail=detail,
    )


def _rate_limit(exc: Exception, model: str, detail: str) -> LLMError:
    retry_after = retry_after_seconds(exc)
    wait = f" Try again in {retry_after:g} seconds." if retry_after is not None else ""
    return RateLimitError(
        f"{model} is rate-limiting requests.{wait}", retry_after=retry_after, detail=detail
    )


def _timeout(exc: Exception, model: str, detail: str) -> LLMError:
    return ProviderUnavailableError(f"{model} did not answer in time.", detail=detail)


def _unavailable(exc: Exception, model: str, detail: str) -> LLMError:
    if any(hint in detail.lower() for hint in _MISSING_KEY_HINTS):
        return _authentication(exc, model, detail)
    return ProviderUnavailableError(
        f"{model} is unavailable right now (provider or network error). Try again shortly.",
        detail=detail,
    )


def _api_error(exc: Exception, model: str, detail: str) -> LLMError:
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and status >= 500:
        return _unavailable(exc, model, detail)
    return _bad_request(exc, model, detail)


# Most specific first: litellm's classes subclass each other (ContextWindowExceededError is a
# BadRequestError, Timeout an openai APIConnectionError).
_TABLE: tuple[tuple[tuple[str, ...], Builder], ...] = (
    (("ContextWindowExceededError",), _context_window),
    (("ContentPolicyViolationError",), _content_policy),
    (("LiteLLMUnknownProvider", "NotFoundError"), _unknown_model),
    (("AuthenticationError", "PermissionDeniedError"), _authentication),
    (("RateLimitError",), _rate_limit),
    (("Timeout",), _timeout),
    (("BadRequestError", "UnprocessableEntityError", "InvalidRequestError"), _bad_request),
    (
        (
            "ServiceUnavailableError",
            "BadGatewayError",
            "InternalServerError",
            "APIConnectionError",
        ),
        _unavailable,
    ),
    (("APIError", "APIResponseValidationError"), _api_error),
)


def retry_after_seconds(exc: Exception) -> float | None:
    """Retry-After from the exception's attribute or its response headers, in seconds."""
    value = getattr(exc, "retry_after", None)
    if isinstance(value, int | float):
        return float(value)
    for headers in _header_sources(exc):
        milliseconds = _header(headers, "retry-after-ms")
        if milliseconds is not None:
            parsed = _parse_seconds(milliseconds)
            if parsed is not None:
                return parsed / 1000
        seconds = _header(headers, "retry-after")
        if seconds is not None:
            return _parse_seconds(seconds)
    return None


def _header_sources(exc: Exception) -> list[Any]:
    response = getattr(exc, "response", None)
    sources = [getattr(response, "headers", None), getattr(exc, "litellm_response_headers", None)]
    return [headers for headers in sources if headers]


def _header(headers: Any, name: str) -> str | None:
    try:
        value = headers.get(name)
        if value is None:
            value = headers.get(name.title())
    except AttributeError:
        return None
    return None if value is None else str(value)


def _parse_seconds(value: str) -> float | None:
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:  # Retry-After may also be an HTTP date
        return max(0.0, (parsedate_to_datetime(value) - datetime.now(UTC)).total_seconds())
    except (TypeError, ValueError):
        return None


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "no reason given"
    return line[:200]
