"""The model as every chat request meets it: its facts, the tools it is offered, their cost.

The tool definitions a model that calls tools is offered count against its budget in
every request (`tool_tokens`), and a side request that means to read the chat's cache
must carry the same definitions (the provider caches them first). Worked out once per
session context, from the runtime it was handed.
"""

from __future__ import annotations

import json
from dataclasses import replace

from chat.llm.runtime import Runtime
from chat.repo.commands.model_tools import with_command_tools
from chat.repo.edittools import with_edit_tools
from chat.repo.tools.context_tools import TOOL_SPECS
from contextcore.models import ModelFacts

TOOL_ENCODING = "cl100k_base"


def chat_tools(runtime: Runtime, model: str) -> list[dict] | None:
    """The tool definitions every chat request to `model` carries (None: it calls none)."""
    if not runtime.supports_tools(model):
        return None
    return with_command_tools(with_edit_tools(TOOL_SPECS))


def tool_tokens(runtime: Runtime, tools: list[dict] | None) -> int:
    """What the tool definitions cost in every request (counted like message text)."""
    if not tools:
        return 0
    return runtime.counter(TOOL_ENCODING).count(json.dumps(tools)) + 16 * len(tools)


def request_setup(runtime: Runtime, model: str) -> tuple[ModelFacts, str | None, list[dict] | None]:
    """The model's facts as every request meets them (its tools' tokens counted against
    the budget), a warning when they are guessed, and the tool definitions."""
    facts, warning = runtime.facts(model)
    tools = chat_tools(runtime, model)
    if tools:
        facts = replace(facts, tool_tokens=tool_tokens(runtime, tools))
    return facts, warning, tools
