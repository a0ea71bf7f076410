"""Loopback HTTP fakes of the Anthropic Messages and OpenAI Chat Completions APIs.

The cache benchmark's stand-in providers, which the tests use too: they belong to the
benchmark, not to the product, so nothing under acdc, chat, history or contextcore imports
them. They implement prompt caching as each provider documents it (`anthropic`, `openai`) and
report usage in the providers' own fields, so that acdc's cost can be measured from
outside, over the wire, by tests and by `acdc bench cache`. Scripted answers, a record of
every request and a clock the harness moves are in `server` and `replies`. Standard
library and tiktoken only: no litellm, no Django, nothing from contextcore's simulator.
"""

from __future__ import annotations

from bench.wirefakes.anthropic import AnthropicCache, minimum_tokens
from bench.wirefakes.openai import AUTOMATIC_RULES, AutomaticRules, PrefixCache
from bench.wirefakes.replies import Clock, Reply, ToolCall
from bench.wirefakes.server import Received, WireFake

__all__ = [
    "AUTOMATIC_RULES",
    "AnthropicCache",
    "AutomaticRules",
    "Clock",
    "PrefixCache",
    "Received",
    "Reply",
    "ToolCall",
    "WireFake",
    "minimum_tokens",
]
