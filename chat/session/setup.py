"""The model as every chat request meets it: its facts, the tools it is offered, their cost.

The tool definitions a model that calls tools is offered count against its budget in
every request (`tool_tokens`), and a side request that means to read the chat's cache
must carry the same definitions (the provider caches them first). Worked out once per
session context, from the runtime it was handed.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import replace
from pathlib import Path

from django.conf import settings

from chat.llm.runtime import Runtime
from chat.repo.commands.model_tools import with_command_tools
from chat.repo.edittools import with_edit_tools
from chat.repo.mcp import model_calls
from chat.repo.tools.context_tools import TOOL_SPECS
from contextcore.models import ModelFacts

TOOL_ENCODING = "cl100k_base"


def chat_tools(runtime: Runtime, model: str) -> list[dict] | None:
    """The tool definitions every chat request to `model` carries (None: it calls none)."""
    if not runtime.supports_tools(model):
        return None
    return with_command_tools(with_edit_tools(TOOL_SPECS))


def mcp_tools(runtime: Runtime, session_id: str) -> list[dict]:
    """The session's MCP part of `tools`, from the snapshot its first turn took: the same
    while the person's servers stay the same, whatever the servers list meanwhile."""
    taken = model_calls.kept(Path(settings.ACDC_DATA_DIR), session_id)
    return taken.definitions(runtime.counter(TOOL_ENCODING).count)


MCP_CHANGED = (
    "Tools changed: an MCP server was added, removed or switched, so the next request's "
    "tools differ and its cached prefix is rebuilt (written again, not read from cache)."
)


def mcp_change_note(session_id: str, *, sent: bool) -> str:
    """The HUD's note while the session's next request will carry other tools than its
    last (`sent`: it sent one already), else ""."""
    data = Path(settings.ACDC_DATA_DIR)
    return MCP_CHANGED if model_calls.tools_change_pending(data, session_id, sent=sent) else ""


def tool_tokens(runtime: Runtime, tools: list[dict] | None) -> int:
    """What the tool definitions cost in every request (`TokenCounter.count_tool`). The
    count is kept in the data folder by the definitions' digest: a restart that restores a
    session reads it instead of loading the token counter's encoding (about 40 MB) before
    anyone sends, so it holds no more than a first start."""
    if not tools:
        return 0
    text = json.dumps(tools)
    # "count_tool": the rule the count follows (a count kept under another rule is not read)
    key = hashlib.sha256(f"count_tool\0{TOOL_ENCODING}\0{text}".encode()).hexdigest()
    store = Path(settings.ACDC_DATA_DIR) / COUNTS_FILE
    kept = _read_counts(store)
    if isinstance(kept.get(key), int):
        return kept[key]
    counter = runtime.counter(TOOL_ENCODING)
    count = sum(counter.count_tool(tool) for tool in tools)  # as the request's size counts
    _write_counts(store, {key: count})
    return count


COUNTS_FILE = "tool-tokens.json"


def _read_counts(store: Path) -> dict:
    try:
        kept = json.loads(store.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return kept if isinstance(kept, dict) else {}


def _write_counts(store: Path, counts: dict) -> None:
    """Best effort, whole or not at all: a full disk only means counting again next time."""
    partial = store.with_name(f".{store.name}.{os.getpid()}")
    try:
        partial.write_text(json.dumps(counts), encoding="utf-8")
        partial.chmod(0o600)
        partial.replace(store)
    except OSError:
        partial.unlink(missing_ok=True)


def request_setup(
    runtime: Runtime, model: str, session_id: str = ""
) -> tuple[ModelFacts, str | None, list[dict] | None]:
    """The model's facts as every request meets them (its tools' tokens counted against
    the budget), a warning when they are guessed, and the tool definitions: acdc's own,
    then the session's MCP ones (`mcp_tools`)."""
    facts, warning = runtime.facts(model)
    tools = chat_tools(runtime, model)
    if tools and session_id:
        tools = [*tools, *mcp_tools(runtime, session_id)]
    if tools:
        facts = replace(facts, tool_tokens=tool_tokens(runtime, tools))
    return facts, warning, tools
