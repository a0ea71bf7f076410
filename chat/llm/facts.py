"""What acdc knows about each model: `ModelFacts` from litellm's bundled map, per model.

Window, output limit, prices and capabilities come from `litellm.get_model_info` (the
offline copy). Two things the map lacks are filled in: the minimum prompt a provider
caches (a small documented table) and the tiktoken encoding (contextcore's one table,
`encoding_for_model`). The offline `acdc/*` models have facts of their own. An unknown
model gets `ModelFacts.unknown()` (with that cache minimum and tokenizer) and a warning,
never an exception. Also: which model to use by default, given the environment.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from contextcore.models import DEFAULT_MAX_INPUT_TOKENS, ModelFacts
from contextcore.tokens import encoding_for_model

# Sonnet-like prices, so the dry-run's cost estimate means something even when the caller
# names no model to price with; window and limits of a current Claude model.
_OFFLINE = MappingProxyType(
    {
        "name": "",
        "max_input_tokens": 200_000,
        "max_output_tokens": 8_192,
        "input_cost_per_token": 3e-06,
        "output_cost_per_token": 1.5e-05,
        "cache_read_cost_per_token": 3e-07,
        "cache_write_cost_per_token": 3.75e-06,
        "cache_write_1h_cost_per_token": 6e-06,
        "min_cacheable_tokens": 1_024,
        "supports_tools": True,
        "supports_vision": True,
        "supports_prompt_caching": True,
        "tokenizer": "cl100k_base",
    }
)
OFFLINE_MODELS = ("acdc/fake", "acdc/dry-run")
_FREE = MappingProxyType(
    {
        "input_cost_per_token": 0.0,
        "output_cost_per_token": 0.0,
        "cache_read_cost_per_token": 0.0,
        "cache_write_cost_per_token": 0.0,
        "cache_write_1h_cost_per_token": 0.0,
    }
)
# What the dry-run report prices with when the request names no real model to price with.
REFERENCE_PRICES = ModelFacts(**{**_OFFLINE, "name": "reference prices (Claude Sonnet-like)"})

# Minimum cacheable prompt, first match wins, matched against the model name without its
# provider prefix. Anthropic's prompt-caching documentation: 4096 for Opus 4.5+ and Haiku
# 4.5, 2048 for Sonnet 4.6 and Haiku 3/3.5, 1024 for other Claude models. OpenAI caches
# prompts of 1024 tokens or more. Gemini's implicit cache: 2048 for 2.5 Flash and Pro, 4096
# for later models. Anything else: contextcore's default (1024).
_MIN_CACHEABLE: tuple[tuple[str, int], ...] = (
    (r"opus-4-[5-9]|opus-4\.[5-9]", 4_096),
    (r"haiku-4", 4_096),
    (r"sonnet-4-[6-9]|sonnet-4\.[6-9]", 2_048),
    (r"claude-3-haiku|claude-3-5-haiku|claude-3\.5-haiku|haiku-3", 2_048),
    (r"claude", 1_024),
    (r"gpt|^o\d|chatgpt", 1_024),
    (r"gemini-(1|2)\.", 2_048),
    (r"gemini", 4_096),
)

# Environment variables that name a provider key, and the model acdc then uses by default.
PROVIDER_KEYS: tuple[tuple[str, str], ...] = (
    ("ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-5"),
    ("OPENAI_API_KEY", "openai/gpt-4.1"),
    ("GEMINI_API_KEY", "gemini/gemini-2.5-pro"),
    ("OPENROUTER_API_KEY", "openrouter/anthropic/claude-sonnet-4.5"),
    ("DEEPSEEK_API_KEY", "deepseek/deepseek-chat"),
    ("MISTRAL_API_KEY", "mistral/mistral-large-latest"),
)
DRY_RUN_MODEL = "acdc/dry-run"


def has_provider_key(env: Mapping[str, str]) -> bool:
    return any(env.get(name) for name, _ in PROVIDER_KEYS)


def default_model(env: Mapping[str, str]) -> str:
    """ACDC_MODEL if set; else a sensible model for the first provider key found; else dry-run."""
    if env.get("ACDC_MODEL"):
        return env["ACDC_MODEL"]
    for name, model in PROVIDER_KEYS:
        if env.get(name):
            return model
    return DRY_RUN_MODEL


def model_facts(
    model: str, lookup: Callable[[str], Mapping[str, Any]]
) -> tuple[ModelFacts, str | None]:
    """Facts for `model` and, when the bundled map does not know it, a warning to show.

    `lookup` is litellm's `get_model_info` (passed in, so this table never imports litellm);
    it raises for a model the map lacks."""
    if model == DRY_RUN_MODEL:
        # Nothing is sent, so nothing is billed; the report prices with REFERENCE_PRICES.
        return ModelFacts(**{**_OFFLINE, **_FREE, "name": model}), None
    if model in OFFLINE_MODELS:
        return ModelFacts(**{**_OFFLINE, "name": model}), None
    try:
        info = lookup(model)
    except Exception:
        warning = (
            f"litellm's model map has no entry for {model!r}: assuming a "
            f"{DEFAULT_MAX_INPUT_TOKENS:,}-token window and showing no prices."
        )
        base = _base_name(model)
        facts = replace(
            ModelFacts.unknown(model),
            min_cacheable_tokens=min_cacheable_tokens(base),
            tokenizer=tokenizer_for(base),
            provider=model.split("/", 1)[0] if "/" in model else "",
        )
        return facts, warning
    return _facts_from_info(model, info), None


def _facts_from_info(model: str, info: Mapping[str, Any]) -> ModelFacts:
    defaults = ModelFacts(name=model)
    base = _base_name(model)
    max_input = info.get("max_input_tokens") or info.get("max_tokens") or defaults.max_input_tokens
    max_output = (
        info.get("max_output_tokens") or info.get("max_tokens") or defaults.max_output_tokens
    )
    return ModelFacts(
        name=model,
        max_input_tokens=int(max_input),
        max_output_tokens=int(max_output),
        input_cost_per_token=float(info.get("input_cost_per_token") or 0.0),
        output_cost_per_token=float(info.get("output_cost_per_token") or 0.0),
        cache_read_cost_per_token=float(info.get("cache_read_input_token_cost") or 0.0),
        cache_write_cost_per_token=float(info.get("cache_creation_input_token_cost") or 0.0),
        cache_write_1h_cost_per_token=float(
            info.get("cache_creation_input_token_cost_above_1hr") or 0.0
        ),
        min_cacheable_tokens=min_cacheable_tokens(base),
        supports_tools=bool(info.get("supports_function_calling")),
        supports_vision=bool(info.get("supports_vision")),
        supports_prompt_caching=bool(info.get("supports_prompt_caching")),
        tokenizer=tokenizer_for(base),
        provider=str(info.get("litellm_provider") or model.split("/", 1)[0]),
    )


def _base_name(model: str) -> str:
    return model.rsplit("/", 1)[-1].lower()


def min_cacheable_tokens(base_name: str) -> int:
    for pattern, tokens in _MIN_CACHEABLE:
        if re.search(pattern, base_name):
            return tokens
    return ModelFacts(name=base_name).min_cacheable_tokens


def tokenizer_for(base_name: str) -> str:
    """The tiktoken encoding, from contextcore's one table (tiktoken's own model names)."""
    return encoding_for_model(base_name)
