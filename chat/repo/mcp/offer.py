"""What the model sees of the MCP servers: tool names, the `tools` entries, search, results.

An MCP tool reaches the model as `mcp__<server>__<tool>`. Whenever a server is enabled the
request's `tools` holds two fixed tools after acdc's own, `search_tools(query)` and
`call_tool(name, arguments)`; the servers' own definitions follow them, sorted by name,
only while they all fit ACDC_MCP_TOOL_TOKENS (`offered`) — above it they are reached only
through the two, and `search_tools` answers with the matching tools' full definitions, in
the conversation rather than in the cached prefix. `offered` is computed once from a
`Snapshot` (the servers' tools as first listed), so a server's later list does not change
a session's `tools`. `decide` is the approval rule: a tool annotated read-only runs; any
other asks the person in a page, and from the terminal runs only with `--allow-mcp SERVER`.
`result_text` turns a call's result into the text the model reads: blocks in order (an
image or a resource named, not inlined), cut to ACDC_MCP_OUTPUT_BYTES, redacted.
Non-goals: connecting (`client`), storing the toolcall object (the turn's tool rounds).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from chat.repo.credentials import redact

PREFIX = "mcp__"
SEARCH = "search_tools"
CALL = "call_tool"
MAX_FOUND = 10
WORD = re.compile(r"[a-z0-9]+")
# What every provider accepts as a function's name (OpenAI's rule, the strictest).
MODEL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")
UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def model_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>`, or, when a server names a tool with characters or a length
    a provider refuses (dots, spaces, 100 letters), that name made safe and cut, with a
    digest of the real one so two such names stay apart. The call still uses `tool`."""
    name = f"{PREFIX}{server}__{tool}"
    if MODEL_NAME.match(name):
        return name
    digest = hashlib.sha256(tool.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{UNSAFE.sub('_', name)[:55]}_{digest}"


@dataclass(frozen=True)
class Listed:
    """One server's tool as first listed: what the model is given and what decides approval."""

    server: str
    tool: str
    description: str
    schema: Mapping[str, Any]
    read_only: bool
    annotations: Mapping[str, Any] = field(default_factory=dict)  # shown, never trusted

    @property
    def name(self) -> str:
        return model_name(self.server, self.tool)

    def definition(self) -> dict:
        schema = dict(self.schema) or {"type": "object", "properties": {}}
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": schema},
        }


def listed(server: str, tools: Iterable[Any]) -> tuple[Listed, ...]:
    """The SDK's `Tool`s of `server` as `Listed` (annotations are read, never widened)."""
    found = []
    for tool in tools:
        annotations = getattr(tool, "annotations", None)
        read_only = bool(annotations is not None and annotations.read_only_hint is True)
        description = " ".join((tool.description or "").split())[:1000]
        shown = annotations.model_dump(exclude_none=True) if annotations is not None else {}
        schema = dict(tool.input_schema)
        if schema.get("type", "object") != "object":  # providers take only objects
            schema = {"type": "object", "properties": {}}
            description += " (acdc: its argument schema was not an object and is left out)"
        found.append(Listed(server, tool.name, description, schema, read_only, shown))
    return tuple(sorted(found, key=lambda t: t.name))


FIXED = (
    {
        "type": "function",
        "function": {
            "name": SEARCH,
            "description": "Search the tools of the developer's MCP servers by words of their "
            "names and descriptions; answers with each match's full definition "
            "(name mcp__<server>__<tool>, description, JSON schema of its arguments).",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string", "description": "a few words"}},
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": CALL,
            "description": "Call one MCP tool by its mcp__<server>__<tool> name (as "
            "search_tools lists it) with its arguments as a JSON object.",
            "parameters": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "mcp__<server>__<tool>"},
                    "arguments": {"type": "object", "description": "the tool's arguments"},
                },
                "required": ["name", "arguments"],
            },
        },
    },
)


def offered(tools: tuple[Listed, ...], budget_tokens: int, count: Callable[[str], int]) -> list:
    """The MCP part of `tools`, after acdc's own: none without tools, else the two fixed
    tools, then every definition sorted by name while all of them fit `budget_tokens`."""
    if not tools:
        return []
    definitions = [t.definition() for t in sorted(tools, key=lambda t: t.name)]
    if count(json.dumps(definitions)) <= budget_tokens:
        return [*FIXED, *definitions]
    return list(FIXED)


def search(tools: tuple[Listed, ...], query: str) -> str:
    """The full definitions of the tools whose name or description hold the query's words,
    best first, as JSON the model reads (at most MAX_FOUND)."""
    words = set(WORD.findall(query.casefold()))
    if not words:
        return "give a few words to search for"
    scored = []
    for tool in tools:
        text = set(WORD.findall(f"{tool.name} {tool.description}".casefold()))
        hits = len(words & text)
        if hits:
            scored.append((-hits, tool.name, tool))
    found = [t.definition()["function"] for _, _, t in sorted(scored)[:MAX_FOUND]]
    if not found:
        return f"no MCP tool matches {query[:80]!r}"
    return json.dumps(found, ensure_ascii=False)


def decide(tool: Listed, *, page: bool, allowed: frozenset[str], always: frozenset[str]) -> str:
    """ "run", "ask" (a page asks the person) or the one line the model is told instead."""
    if tool.read_only or tool.server in allowed or tool.name in always:
        return "run"
    if page:
        return "ask"
    return (
        f"{tool.name} was not run: it is not read-only, so it needs the developer's approval "
        f"(in the page, or acdc chat --allow-mcp {tool.server})"
    )


def result_text(result: Any, cap_bytes: int) -> tuple[str, bool]:
    """The text of a `CallToolResult` for the model, and whether the tool reported an error."""
    parts = []
    for block in result.content:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "image" or kind == "audio":
            size = len(getattr(block, "data", "") or "") * 3 // 4
            parts.append(f"[{kind} {getattr(block, 'mime_type', '')}, {size} bytes, not shown]")
        elif kind == "resource_link":
            parts.append(f"[resource {block.uri}]")
        elif kind == "resource":
            inner = block.resource
            parts.append(getattr(inner, "text", None) or f"[resource {inner.uri}, binary]")
    if not parts and getattr(result, "structured_content", None) is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    text = redact("\n".join(parts)).text
    raw = text.encode("utf-8")
    if len(raw) > cap_bytes:
        note = f"\n[acdc] cut to {cap_bytes} of {len(raw)} bytes"
        text = raw[: max(cap_bytes - len(note), 0)].decode("utf-8", "ignore") + note
    return text, bool(getattr(result, "is_error", False))


def find(tools: tuple[Listed, ...], name: str) -> Listed | None:
    return next((t for t in tools if t.name == name), None)
