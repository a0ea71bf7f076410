"""The provider's stream read by acdc, without litellm's `CustomStreamWrapper`.

litellm stays the one seam to providers: it resolves the provider and key
(`get_llm_provider`), maps the parameters (`get_optional_params`), builds the request (the
provider config's `validate_environment`, `get_complete_url`, `transform_request`) and
parses each event (the provider's own `chunk_parser`), and its `exception_type` names every
failure as litellm would. What the wrapper did per chunk besides (objects for logging and
caching, a thread-pool task per chunk) is not done: acdc reads the SSE through litellm's own
HTTP client (its aiohttp transport unless litellm is told otherwise: a third of the reading's
CPU of httpx's own) and hands litellm's parsed chunks to the client, which assembles its
events from them.
Covered: `openai` (OpenAI and any OpenAI-compatible server or gateway given as api_base)
and `anthropic`; `plan` says None for anything else, which then goes through
`litellm.acompletion` as before. `tests/chat/llm/test_direct_stream.py` pins all of it
against the wrapper on recorded streams.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx

from chat.llm.errors import malformed_response
from contextcore.llm import LLMError

COVERED = frozenset({"openai", "anthropic"})
# Arguments of `LiteLLMClient._arguments` that are the call's, not the provider's parameters.
_CALL_ONLY = ("model", "messages", "api_base", "metadata")
_ANTHROPIC_BASE = "https://api.anthropic.com/v1/messages"


@dataclass
class DirectCall:
    """One request as litellm would send it, and the parser of its answer."""

    model: str  # the name as the caller gave it (for errors)
    provider: str
    url: str
    headers: dict[str, str]
    body: bytes
    parser: Any  # litellm's chunk parser for this provider, one per stream (it has state)
    messages: list[Any]  # as the caller gave them, to count a prompt the provider did not


def plan(litellm: Any, arguments: dict[str, Any]) -> DirectCall | None:
    """The direct call for `arguments` (those of `litellm.acompletion`), or None when the
    provider is not covered or the request is one litellm should refuse itself (no key, an
    unknown provider): the wrapper path then raises its error as it always has."""
    try:
        name, provider, dynamic_key, api_base = litellm.get_llm_provider(
            model=arguments["model"], api_base=arguments.get("api_base")
        )
    except Exception:
        return None
    if provider not in COVERED:
        return None
    # The transforms rewrite the messages in place (Anthropic's takes the system message
    # out), and the caller's request must stay as it was: a retry sends it again.
    original = arguments["messages"]
    arguments = {**arguments, "messages": copy.deepcopy(original)}
    if provider == "anthropic":
        call = _anthropic(litellm, arguments, name, dynamic_key, api_base)
    else:
        call = _openai(litellm, arguments, name, dynamic_key, api_base)
    if call is not None:
        call.messages = original
    return call


def _parameters(litellm: Any, arguments: dict[str, Any], name: str, provider: str) -> dict:
    extra = {k: v for k, v in arguments.items() if k not in _CALL_ONLY}
    return litellm.utils.get_optional_params(
        model=name, custom_llm_provider=provider, messages=arguments["messages"], **extra
    )


def _openai(
    litellm: Any, arguments: dict[str, Any], name: str, key: str | None, api_base: str | None
) -> DirectCall | None:
    module = litellm.llms.openai.chat.gpt_transformation
    config = _config(litellm, name, "openai")
    key = module.OpenAIGPTConfig.get_api_key(key)
    if key is None:
        return None  # the SDK's "api_key client option must be set", from the wrapper path
    base = module.OpenAIGPTConfig.get_api_base(api_base)
    params = _parameters(litellm, arguments, name, "openai")
    litellm_params = {"api_base": base, "custom_llm_provider": "openai"}
    headers = config.validate_environment({}, name, arguments["messages"], params, {}, key, base)
    body = config.transform_request(name, arguments["messages"], params, litellm_params, headers)
    body.update(body.pop("extra_body", None) or {})  # as the openai SDK sends it
    url = config.get_complete_url(base, key, name, params, litellm_params, stream=True)
    parser = module.OpenAIChatCompletionStreamingHandler(
        streaming_response=None, sync_stream=False, json_mode=False
    )
    return DirectCall(
        arguments["model"], "openai", url, headers, _json(body), parser, arguments["messages"]
    )


def _anthropic(
    litellm: Any, arguments: dict[str, Any], name: str, key: str | None, api_base: str | None
) -> DirectCall | None:
    chat = litellm.llms.anthropic.chat
    config = _config(litellm, name, "anthropic")
    key = key or litellm.anthropic_key or litellm.api_key or os.environ.get("ANTHROPIC_API_KEY")
    if key is None:
        return None  # litellm's "Missing Anthropic API Key", from the wrapper path
    url = _anthropic_url(litellm, api_base)
    params = _parameters(litellm, arguments, name, "anthropic")
    for internal in ("stream", "json_mode", "is_vertex_request"):
        params.pop(internal, None)
    params["is_vertex_request"] = False
    litellm_params: dict[str, Any] = {"api_base": url, "custom_llm_provider": "anthropic"}
    messages = arguments["messages"]
    headers = config.validate_environment({}, name, messages, params, litellm_params, key, url)
    request = config.transform_request(name, messages, params, litellm_params, headers)
    headers, body = litellm.anthropic_beta_headers_manager.update_request_with_filtered_beta(
        headers=headers, request_data=request, provider="anthropic"
    )
    body["stream"] = True
    parser = chat.handler.ModelResponseIterator(
        streaming_response=None,
        sync_stream=False,
        json_mode=False,
        tool_name_reverse_map=litellm_params.get(
            chat.transformation.ANTHROPIC_TOOL_NAME_REVERSE_MAP_KEY
        ),
    )
    return DirectCall(
        arguments["model"], "anthropic", url, headers, _json(body), parser, arguments["messages"]
    )


def _anthropic_url(litellm: Any, api_base: str | None) -> str:
    """The Messages endpoint as litellm's `completion` finds it (main.py's anthropic route)."""
    base = (
        api_base
        or litellm.api_base
        or os.environ.get("ANTHROPIC_API_BASE")
        or os.environ.get("ANTHROPIC_BASE_URL")
        or _ANTHROPIC_BASE
    )
    keep = os.environ.get("LITELLM_ANTHROPIC_DISABLE_URL_SUFFIX", "").lower() == "true"
    return base if keep or base.endswith("/v1/messages") else base + "/v1/messages"


def _config(litellm: Any, name: str, provider: str) -> Any:
    return litellm.utils.ProviderConfigManager.get_provider_chat_config(
        model=name, provider=litellm.types.utils.LlmProviders(provider)
    )


def _json(body: dict[str, Any]) -> bytes:
    return json.dumps(body, ensure_ascii=False).encode()


class DirectStream:
    """The parsed chunks of one streamed answer, in order; `aclose` ends the connection.

    Any failure (HTTP status, connection, an error event mid-stream, an unreadable event)
    is raised as litellm's own exception for the provider, from `exception_type`.
    """

    def __init__(self, litellm: Any, call: DirectCall, response: httpx.Response) -> None:
        self._litellm = litellm
        self.call = call
        self._response = response
        # Whether the provider counted the completion itself (else the client counts it).
        self.reported = False

    @classmethod
    async def open(cls, litellm: Any, http: httpx.AsyncClient, call: DirectCall) -> DirectStream:
        """Sends the request; returns once the provider's headers say it is streaming."""
        response = None
        try:
            request = http.build_request("POST", call.url, headers=call.headers, content=call.body)
            response = await http.send(request, stream=True)
            if response.status_code >= 400:
                text = (await response.aread()).decode("utf-8", "replace")
                status, headers = response.status_code, response.headers
                raise _provider_error(litellm, call, text, status, headers)
        except Exception as exc:
            if response is not None:
                await response.aclose()
            raise mapped(litellm, call, exc) from exc
        return cls(litellm, call, response)

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._chunks()

    async def _chunks(self) -> AsyncIterator[Any]:
        parse = self.call.parser.chunk_parser
        usage_seen = False
        try:
            async for data in _data_lines(self._response):
                if data == b"[DONE]":
                    break
                chunk = parse(self._checked(self._decoded(data)))
                usage = getattr(chunk, "usage", None)
                if usage is not None:
                    usage_seen = True
                    self.reported = self.reported or bool(getattr(usage, "completion_tokens", 0))
                yield chunk
        except Exception as exc:
            raise mapped(self._litellm, self.call, exc) from exc
        if not usage_seen:
            yield self._counted_usage()

    def _decoded(self, data: bytes) -> Any:
        try:
            return json.loads(data)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            shown = data[:200].decode("utf-8", "replace")
            raise malformed_response(self.call.model, f"{exc}: {shown}") from exc

    def _checked(self, event: Any) -> Any:
        """`event`, unless it is an OpenAI-format error: that is raised as the openai SDK
        raises it under the wrapper (`APIError`), so that it is named as it always was."""
        if self.call.provider == "openai" and isinstance(event, dict) and event.get("error"):
            error = event["error"]
            message = error.get("message") if isinstance(error, dict) else None
            raise self._litellm.openai.APIError(
                message or str(error), self._response.request, body=error
            )
        return event

    def _counted_usage(self) -> Any:
        """A last chunk with the prompt counted, for a provider that sent no usage (as the
        wrapper makes one; the client counts the completion from the text)."""
        prompt = self._litellm.token_counter(model=self.call.model, messages=self.call.messages)
        usage = self._litellm.Usage(prompt_tokens=prompt, completion_tokens=0, total_tokens=prompt)
        return self._litellm.types.utils.ModelResponseStream(choices=[], usage=usage)

    async def aclose(self) -> None:
        await self._response.aclose()


async def _data_lines(response: httpx.Response) -> AsyncIterator[bytes]:
    """The value of each `data:` line of an event stream, as bytes (json reads UTF-8
    itself): lines end with CR, LF or CRLF; event names, comments and the blank lines
    between events are skipped. Read as bytes, not through httpx's text and line
    decoders, which cost as much again per event."""
    rest = b""
    async for piece in response.aiter_bytes():
        lines = (rest + piece).splitlines(keepends=True)
        rest = lines.pop() if lines and lines[-1][-1:] not in (b"\n", b"\r") else b""
        for line in lines:
            if line.startswith(b"data:"):
                yield line[5:].strip()
    if rest.startswith(b"data:"):  # a last line without its line break
        yield rest[5:].strip()


def _provider_error(
    litellm: Any, call: DirectCall, text: str, status: int, headers: httpx.Headers
) -> Exception:
    """The provider's exception class for an HTTP error (what its handler raises)."""
    module = litellm.llms.anthropic if call.provider == "anthropic" else litellm.llms.openai
    error = module.common_utils.AnthropicError if call.provider == "anthropic" else None
    error = error or module.common_utils.OpenAIError
    return error(status_code=status, message=text, headers=headers)


def mapped(litellm: Any, call: DirectCall, exc: Exception) -> Exception:
    """`exc` as litellm's `exception_type` names it for the provider (it raises it)."""
    if isinstance(exc, LLMError):
        return exc
    if isinstance(exc, httpx.TransportError):
        exc = _wrapped(litellm, call, exc)
    exception_type = litellm.litellm_core_utils.exception_mapping_utils.exception_type
    try:
        exception_type(model=call.model, original_exception=exc, custom_llm_provider=call.provider)
    except Exception as named:
        return named
    return exc


def _wrapped(litellm: Any, call: DirectCall, exc: Exception) -> Exception:
    """A connection failure as the provider's handler wraps it (status 500), raised from
    the original so that `chat.llm.errors` still finds why."""
    error = _provider_error(litellm, call, str(exc), 500, httpx.Headers())
    error.__cause__ = exc
    return error
