"""The offline models, registered with litellm as the custom provider "acdc".

One handler answers `acdc/fake` (scripted by a `FakeScript`: replies, chunking, delays,
tool calls, how the stream ends, and provider errors raised as the litellm exceptions a
real provider produces) and `acdc/dry-run` (streams a report of the request instead of an
answer). Both go through litellm's real streaming path and end with a usage chunk that
includes simulated cache reads and writes (unless a step is `cut`). Only async streaming
is implemented: `LiteLLMClient` never asks for more.
This module is imported by `chat.llm.sdk` when litellm is first needed, never at start-up;
its import sets litellm up (`LITELLM`), once.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from chat.llm.environment import configure_offline_environment
from chat.llm.facts import REFERENCE_PRICES, model_facts
from chat.llm.fake import DEFAULT_CHUNK_SIZE, FakeRequest, FakeScript, FakeStep, PrefixCache
from chat.llm.report import render_report
from contextcore.models import ModelFacts
from contextcore.prompt.cachesim import RequestCost
from contextcore.tokens import TokenCounter

# This module is loaded only by chat.llm.sdk; the environment is set again in case a test
# imports it first, because litellm reads it at import time.
configure_offline_environment()
import litellm  # noqa: E402

PROVIDER = "acdc"
REPORT_CHUNK_SIZE = 80
_FAKE_URL = httpx.Request("POST", "http://127.0.0.1/acdc-fake")

Chunk = dict[str, Any]


class AcdcProvider(litellm.CustomLLM):
    def __init__(self, script: FakeScript | None = None) -> None:
        super().__init__()
        self.script = script if script is not None else FakeScript()
        self.dry_run_cache = PrefixCache()
        self.counter = TokenCounter("cl100k_base")

    def install(self, script: FakeScript) -> FakeScript:
        """Use `script` for `acdc/fake` from now on; returns the one it replaces."""
        previous, self.script = self.script, script
        return previous

    async def astreaming(self, model: str, messages: list, **kwargs: Any) -> AsyncIterator[Chunk]:
        # litellm strips the provider prefix: `model` is "fake" or "dry-run" here. The
        # caller's `metadata=` arrives in litellm_params["metadata"], tools and max_tokens
        # in optional_params.
        optional: dict[str, Any] = dict(kwargs.get("optional_params") or {})
        metadata: dict[str, Any] = dict((kwargs.get("litellm_params") or {}).get("metadata") or {})
        if model == "fake":
            stream = self._fake(messages, optional, metadata)
        elif model == "dry-run":
            stream = self._dry_run(messages, optional.get("tools"), metadata)
        else:
            raise litellm.NotFoundError(
                message=f"acdc/{model} is not an offline model; use acdc/fake or acdc/dry-run.",
                model=f"{PROVIDER}/{model}",
                llm_provider=PROVIDER,
            )
        async for chunk in stream:
            yield chunk

    async def _fake(
        self, messages: list, optional: dict[str, Any], metadata: dict[str, Any]
    ) -> AsyncIterator[Chunk]:
        script = self.script
        tools = optional.get("tools")
        script.requests.append(
            FakeRequest("acdc/fake", copy.deepcopy(messages), tools, optional, metadata)
        )
        try:
            step = _keepalive_step(metadata) or script.next_step(messages, metadata.get("purpose"))
        except ValueError as exc:  # a broken script file must be loud, not retried
            raise litellm.BadRequestError(
                message=f"acdc/fake script: {exc}", model="acdc/fake", llm_provider=PROVIDER
            ) from exc
        delay = script.chunk_delay(step)
        pieces = split_text(step.text, step.chunk_size or DEFAULT_CHUNK_SIZE)
        for number, piece in enumerate(pieces):
            if step.error and number == step.error_after:
                raise provider_error(step)
            if delay:
                await asyncio.sleep(delay)
            yield text_chunk(piece)
        if step.error:
            raise provider_error(step)
        for index, call in enumerate(step.tool_calls):
            yield tool_chunk(index, call, len(script.requests))
        if step.cut:
            return
        usage = self._usage(messages, tools, step, script.cache)
        finish_reason = step.finish_reason or ("tool_calls" if step.tool_calls else "stop")
        yield final_chunk(finish_reason, {**usage, **step.usage})

    async def _dry_run(
        self, messages: list, tools: list | None, metadata: dict[str, Any]
    ) -> AsyncIterator[Chunk]:
        keepalive = _keepalive_step(metadata)
        if keepalive is not None:  # nothing to report: it only reads the cached prefix
            yield text_chunk(keepalive.text)
            yield final_chunk("stop", self._usage(messages, tools, keepalive, self.dry_run_cache))
            return
        options = metadata.get("acdc") or {}
        # The report's total is the prompt its usage reports: one number for the request.
        billed = self.dry_run_cache.lookup(messages, tools)
        report = render_report(
            model="acdc/dry-run",
            messages=messages,
            tools=tools,
            facts=price_facts(options),
            breakdown=options.get("breakdown"),
            counter=self.counter,
            prompt_tokens=billed.prompt_tokens,
        )
        for piece in split_text(report, REPORT_CHUNK_SIZE):
            yield text_chunk(piece)
        step = FakeStep(text=report)
        yield final_chunk("stop", self._usage(messages, tools, step, self.dry_run_cache, billed))

    def _usage(
        self,
        messages: list,
        tools: list | None,
        step: FakeStep,
        cache: PrefixCache,
        billed: RequestCost | None = None,
    ) -> dict[str, int]:
        billed = billed or cache.lookup(messages, tools)
        prompt = billed.prompt_tokens
        completion = self.counter.count_text(step.text) + sum(
            self.counter.count_text(str(call.get("arguments", ""))) for call in step.tool_calls
        )
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "cache_read_input_tokens": billed.cache_read_tokens,
            "cache_creation_input_tokens": billed.cache_write_tokens,
        }


def _keepalive_step(metadata: Mapping[str, Any]) -> FakeStep | None:
    """A keep-alive refresh (chat.session.keepalive) is answered with a period and takes no
    scripted step, so a test's script is not thrown out of step by one."""
    return FakeStep(text=".") if metadata.get("purpose") == "keepalive" else None


def price_facts(options: Mapping[str, Any]) -> ModelFacts:
    """Prices for the dry-run estimate: explicit `prices`, else `price_model`, else Sonnet-like."""
    prices = options.get("prices")
    if isinstance(prices, Mapping):
        return ModelFacts(
            name="prices given in the request",
            input_cost_per_token=float(prices.get("input", 0.0)),
            output_cost_per_token=float(prices.get("output", 0.0)),
            cache_read_cost_per_token=float(prices.get("cache_read", 0.0)),
            cache_write_cost_per_token=float(prices.get("cache_write", 0.0)),
        )
    price_model = str(options.get("price_model") or "")
    if not price_model or price_model.startswith("acdc/"):
        return REFERENCE_PRICES
    facts, _warning = model_facts(price_model, litellm.get_model_info)
    return facts


def split_text(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


def text_chunk(text: str) -> Chunk:
    return {"text": text, "is_finished": False, "finish_reason": "", "usage": None, "index": 0}


def tool_chunk(index: int, call: Mapping[str, Any], request_number: int) -> Chunk:
    """The `index`th tool call of the script's `request_number`th request. One scripted
    without an `id` gets one made of both numbers, so no two calls the script answers
    share an id (a real provider's ids differ from round to round too)."""
    arguments = call.get("arguments", "")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    tool_use = {
        "id": call.get("id") or f"call_fake_{request_number}_{index}",
        "type": "function",
        "function": {"name": call["name"], "arguments": arguments},
        "index": index,
    }
    return {**text_chunk(""), "tool_use": tool_use}


def final_chunk(finish_reason: str, usage: dict[str, int]) -> Chunk:
    # litellm turns this into two chunks: one with finish_reason, then (with
    # stream_options include_usage) one carrying a litellm Usage that keeps the cache fields
    # both as cache_read/creation_input_tokens and in prompt_tokens_details.
    return {
        "text": "",
        "is_finished": True,
        "finish_reason": finish_reason,
        "usage": usage,
        "index": 0,
    }


def provider_error(step: FakeStep) -> Exception:
    """The litellm exception a real provider call would raise for `step.error`."""
    common = {"message": f"acdc/fake: scripted {step.error} error", "model": "acdc/fake"}
    common["llm_provider"] = PROVIDER
    if step.error == "rate_limit":
        headers = {} if step.retry_after is None else {"retry-after": f"{step.retry_after:g}"}
        response = httpx.Response(429, headers=headers, request=_FAKE_URL)
        return litellm.RateLimitError(**common, response=response)
    classes = {
        "auth": litellm.AuthenticationError,
        "server": litellm.InternalServerError,
        "unavailable": litellm.ServiceUnavailableError,
        "connection": litellm.APIConnectionError,
        "timeout": litellm.Timeout,
        "bad_request": litellm.BadRequestError,
        "context_window": litellm.ContextWindowExceededError,
        "not_found": litellm.NotFoundError,
    }
    return classes[str(step.error)](**common)


def _register() -> Any:
    """litellm set up for acdc, the offline models registered as the custom provider
    "acdc": run once, by this module's import (`chat.llm.sdk.litellm`)."""
    litellm.suppress_debug_info = True
    # A parameter one provider lacks (stream_options, temperature on reasoning models) is
    # dropped rather than failing the turn.
    litellm.drop_params = True
    # The wrapper path (providers `chat.llm.direct` does not read) would otherwise start a
    # thread-pool task and an event loop per chunk for success callbacks acdc never set.
    litellm.disable_streaming_logging = True
    provider = AcdcProvider(FakeScript.from_env())
    others = [p for p in litellm.custom_provider_map if p.get("provider") != "acdc"]
    litellm.custom_provider_map = [*others, {"provider": "acdc", "custom_handler": provider}]
    # litellm runs this on every call too; doing it now lets get_llm_provider know "acdc".
    litellm.utils.custom_llm_setup()
    return litellm


LITELLM = _register()
