"""What acdc knows about each model: `ModelFacts` from litellm's bundled map, per model.

Window, output limit, prices and capabilities come from `litellm.get_model_info` (the
offline copy). Two things the map lacks are filled in: the minimum prompt a provider
caches (a small documented table) and the tiktoken encoding (contextcore's one table,
`encoding_for_model`). The offline `acdc/*` models have facts of their own. An unknown
model gets `ModelFacts.unknown()` (with that cache minimum and tokenizer, and the window
and prices the settings give, `ModelSettings`) and a warning naming those settings, never
an exception. An unknown model of an OpenAI-compatible provider (a local server, a
gateway) is offered tools: such servers mostly take them, and one that refuses is
remembered by the runtime. The settings may turn a model's tools on or off. Also: which
model to use by default, given the environment.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
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

# Providers litellm reaches through the OpenAI chat-completions API: an unknown model of
# one is offered tools (the server says no with a 400, and is then asked without).
OPENAI_COMPATIBLE = frozenset(
    {
        "openai",
        "custom_openai",
        "hosted_vllm",
        "lm_studio",
        "ollama_chat",
        "llamafile",
        "openrouter",
        "together_ai",
        "groq",
        "deepinfra",
        "fireworks_ai",
    }
)
TOOLS_SETTING = "ACDC_MODEL_TOOLS"


@dataclass(frozen=True)
class ModelSettings:
    """What the settings say of models: tools on or off (per model, or "*" for all), and
    the window and prices (dollars per million tokens) to assume for a model litellm's map
    does not know. Zero means not set."""

    tools: Mapping[str, bool] = field(default_factory=dict)
    window: int = 0
    input_price: float = 0.0
    output_price: float = 0.0

    @classmethod
    def parse(
        cls, tools: str = "", window: int = 0, input_price: str = "", output_price: str = ""
    ) -> ModelSettings:
        return cls(
            tools=parse_tools(tools),
            window=window,
            input_price=_price("ACDC_INPUT_PRICE", input_price),
            output_price=_price("ACDC_OUTPUT_PRICE", output_price),
        )

    def tools_for(self, model: str) -> bool | None:
        """Tools on (True) or off (False) as the settings say for `model`; None: not said."""
        return self.tools.get(model, self.tools.get("*"))


def parse_tools(text: str) -> dict[str, bool]:
    """ACDC_MODEL_TOOLS: comma-separated `on`/`off` (every model) or `<model>=on|off`."""
    said: dict[str, bool] = {}
    for entry in filter(None, (part.strip() for part in text.split(","))):
        model, _, value = entry.rpartition("=")
        if value.strip().lower() not in ("on", "off"):
            raise ValueError(
                f"{TOOLS_SETTING} takes on, off or <model>=on|off, comma-separated; not {entry!r}"
            )
        said[model.strip() or "*"] = value.strip().lower() == "on"
    return said


def _price(name: str, text: str) -> float:
    try:
        price = float(text) if text.strip() else 0.0
    except ValueError:
        price = -1.0
    if price < 0:
        raise ValueError(f"{name} is dollars per million tokens (such as 0.5), not {text!r}")
    return price


def default_model(env: Mapping[str, str]) -> str:
    """ACDC_MODEL if set; else a sensible model for the first provider key found; else dry-run."""
    if env.get("ACDC_MODEL"):
        return env["ACDC_MODEL"]
    for name, model in PROVIDER_KEYS:
        if env.get(name):
            return model
    return DRY_RUN_MODEL


def model_facts(
    model: str,
    lookup: Callable[[str], Mapping[str, Any]],
    said: ModelSettings | None = None,
    *,
    tools_refused: bool = False,
) -> tuple[ModelFacts, str | None]:
    """Facts for `model` and, when the bundled map does not know it, a warning to show.

    `lookup` is litellm's `get_model_info` (passed in, so this table never imports litellm);
    it raises for a model the map lacks. `said` is what the settings say of models;
    `tools_refused`: the model's server refused tools in this process."""
    if model == DRY_RUN_MODEL:
        # Nothing is sent, so nothing is billed; the report prices with REFERENCE_PRICES.
        return ModelFacts(**{**_OFFLINE, **_FREE, "name": model}), None
    if model in OFFLINE_MODELS:
        return ModelFacts(**{**_OFFLINE, "name": model}), None
    said = said or ModelSettings()
    try:
        info = lookup(model)
    except Exception:
        facts = _unknown_facts(model, said)
    else:
        facts = _facts_from_info(model, info)
    tools = said.tools_for(model)
    if tools_refused:
        tools = False
    if tools is not None:
        facts = replace(facts, supports_tools=tools)
    return facts, None if facts.known else unknown_warning(facts, said, tools_refused)


def _unknown_facts(model: str, said: ModelSettings) -> ModelFacts:
    base = _base_name(model)
    provider = model.split("/", 1)[0] if "/" in model else ""
    return replace(
        ModelFacts.unknown(model),
        max_input_tokens=said.window or DEFAULT_MAX_INPUT_TOKENS,
        input_cost_per_token=said.input_price / 1e6,
        output_cost_per_token=said.output_price / 1e6,
        min_cacheable_tokens=min_cacheable_tokens(base),
        tokenizer=tokenizer_for(base),
        provider=provider,
        supports_tools=provider in OPENAI_COMPATIBLE,
    )


def unknown_warning(facts: ModelFacts, said: ModelSettings, tools_refused: bool = False) -> str:
    """What acdc assumes of a model litellm's map lacks, and the setting for each guess."""
    tokens = f"a {facts.max_input_tokens:,}-token window"
    window = (
        f"{tokens} (ACDC_CONTEXT_WINDOW)" if said.window else f"{tokens} (set ACDC_CONTEXT_WINDOW)"
    )
    if said.input_price or said.output_price:
        prices = "the prices of ACDC_INPUT_PRICE and ACDC_OUTPUT_PRICE"
    else:
        prices = "no prices (set ACDC_INPUT_PRICE and ACDC_OUTPUT_PRICE, $ per million tokens)"
    if tools_refused:
        tools = "it gets no tools: its server refused them"
    elif facts.supports_tools:
        tools = f"it is offered acdc's tools ({TOOLS_SETTING}=off sends none)"
    else:
        tools = f"it gets no tools ({TOOLS_SETTING}=on offers them)"
    known = f"litellm's model map has no entry for {facts.name!r}"
    return f"{known}: assuming {window} and {prices}; {tools}."


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
