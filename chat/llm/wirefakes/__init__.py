"""Loopback HTTP fakes of the Anthropic Messages and OpenAI Chat Completions APIs.

They implement prompt caching as each provider documents it (`anthropic`, `openai`) and
report usage in the providers' own fields, so that acdc's cost can be measured from
outside, over the wire, by tests and by `acdc bench cache`. Scripted answers, a record of
every request and a clock the harness moves are in `server` and `replies`. Standard
library and tiktoken only: no litellm, no Django, nothing from contextcore's simulator.
"""

from __future__ import annotations

from chat.llm.wirefakes.anthropic import AnthropicCache, minimum_tokens
from chat.llm.wirefakes.openai import AUTOMATIC_RULES, AutomaticRules, PrefixCache
from chat.llm.wirefakes.replies import Clock, Reply, ToolCall
from chat.llm.wirefakes.server import Received, WireFake

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
