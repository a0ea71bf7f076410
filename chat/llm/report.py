"""The markdown report `acdc/dry-run` streams back instead of an answer.

It describes the request exactly as litellm delivered it: messages with their tokens and
cache markers, the prefix size at each cache breakpoint, the total, and the input cost at
the prices of the model the session would really use, with no cache, with the cache being
written, and with every cached prefix read. A breakdown passed in the request metadata
(tokens by section and tier) is rendered as a table. With edits on, a line says how the
model is offered edits, read from the request itself: the `edit_file`/`write_file` tools,
or SEARCH/REPLACE blocks when only the system prompt teaches them; another names the
command tools offered. The project
instructions files the breakdown names are listed by name with their tokens, and the
regions suggested for the message with the words that matched. Pure function of its
arguments.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from chat.llm.fake import breakpoint_indexes, has_cache_control
from contextcore.models import ModelFacts
from contextcore.prompt.siderequest import tool_tokens
from contextcore.tokens import TokenCounter

EDIT_TOOLS = ("edit_file", "write_file")
COMMAND_TOOLS = ("run_command", "propose_command")
MCP_FIXED = ("search_tools", "call_tool")  # chat.repo.mcp.offer's names
BLOCKS_MARK = "<<<<<<< SEARCH"


def render_report(
    *,
    model: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    facts: ModelFacts,
    breakdown: Mapping[str, Any] | None,
    counter: TokenCounter,
    prompt_tokens: int | None = None,
) -> str:
    """The report; `prompt_tokens` is the prompt the dry run reports as its usage (the
    status line's and the Context panel's number), else acdc's count of the request."""
    breakdown = dict(breakdown or {})
    instructions = breakdown.pop("instructions", None) or []
    suggested = breakdown.pop("suggested", None) or []
    tool_count = tool_tokens(tools, counter)
    if prompt_tokens is None:
        prompt_tokens = counter.count(messages) + tool_count
    lines = [
        "## Dry run: nothing was sent to a model",
        "",
        f"- Model requested: `{model}`",
        f"- Prices from: `{facts.name}`" + ("" if facts.known else " (unknown: no prices)"),
        f"- Messages: {len(messages)}",
        f"- Tools: {len(tools or [])}",
        *_edits_line(messages, tools),
        *_commands_line(tools),
        *_mcp_line(tools, counter),
        *_instructions_line(instructions),
        f"- Total prompt tokens: {prompt_tokens:,}",
        "",
        *_suggested_lines(suggested),
        *_message_table(messages, counter),
        *_breakpoint_table(messages, counter, tool_count),
        *_breakdown_table(breakdown),
        *_cost_table(messages, prompt_tokens, facts, counter, tool_count),
    ]
    return "\n".join(lines).rstrip() + "\n"


def _edits_line(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> list[str]:
    """How edits are offered: as tools, as blocks the system prompt describes, or (edits
    off: neither is in the request) no line at all."""
    names = [(t.get("function") or {}).get("name") for t in tools or []]
    offered = [name for name in EDIT_TOOLS if name in names]
    if offered:
        listed = ", ".join(f"`{name}`" for name in offered)
        return [f"- Edits: offered as tools ({listed}); results say applied or pending review"]
    system = [m.get("content") for m in messages if m.get("role") == "system"]
    texts = [c if isinstance(c, str) else " ".join(p.get("text", "") for p in c) for c in system]
    if any(BLOCKS_MARK in (text or "") for text in texts):
        return ["- Edits: as SEARCH/REPLACE blocks in the reply (no edit tools offered)"]
    return []


def _commands_line(tools: list[dict[str, Any]] | None) -> list[str]:
    """The command tools offered (the declared commands run in a sandbox), if any."""
    names = [(t.get("function") or {}).get("name") for t in tools or []]
    offered = [name for name in COMMAND_TOOLS if name in names]
    if not offered:
        return []
    listed = ", ".join(f"`{name}`" for name in offered)
    return [f"- Commands: offered as tools ({listed}); declared commands run sandboxed"]


def _mcp_line(tools: list[dict[str, Any]] | None, counter: TokenCounter) -> list[str]:
    """The MCP part of `tools` (chat.repo.mcp): the two fixed tools and the servers' own
    definitions that fit the budget, by name with their tokens."""
    part = [t for t in tools or [] if (t.get("function") or {}).get("name") in MCP_FIXED]
    part += [
        t for t in tools or [] if (t.get("function") or {}).get("name", "").startswith("mcp__")
    ]
    if not part:
        return []
    listed = ", ".join(
        f"`{t['function']['name']}` ({tool_tokens([t], counter):,} tokens)" for t in part
    )
    return [f"- MCP tools in `tools`: {listed}"]


def _instructions_line(files: list) -> list[str]:
    """The project instructions files sent, by name with their tokens."""
    if not files:
        return []
    listed = ", ".join(f"`{name}` ({int(tokens):,} tokens)" for name, tokens in files)
    return [f"- Project instructions: {listed}"]


def _suggested_lines(regions: list) -> list[str]:
    """The regions suggested for the message: where, their tokens, the words that matched."""
    if not regions:
        return []
    lines = ["### Suggested for this message", ""]
    for where, tokens, why in regions:
        matched = ", ".join(f"`{w}`" for w in why) or "pinned"
        lines.append(f"- `{where}` ({int(tokens):,} tokens): matched {matched}")
    return [*lines, ""]


def _message_table(messages: list[dict[str, Any]], counter: TokenCounter) -> list[str]:
    rows = ["### Messages", "", "| # | role | tokens | cache_control |", "|---:|---|---:|---|"]
    for index, message in enumerate(messages):
        marker = "yes" if has_cache_control(message) else ""
        role = message.get("role", "?")
        rows.append(f"| {index} | {role} | {counter.count(message):,} | {marker} |")
    return [*rows, ""]


def _breakpoint_table(
    messages: list[dict[str, Any]], counter: TokenCounter, tool_count: int
) -> list[str]:
    """Each breakpoint's prefix counts the tool definitions: the provider caches them first."""
    indexes = breakpoint_indexes(messages)
    if not indexes:
        return ["### Cache breakpoints", "", "None: nothing in this request can be cached.", ""]
    rows = [
        "### Cache breakpoints",
        "",
        "| breakpoint | after message | prefix tokens |",
        "|---:|---:|---:|",
    ]
    for number, index in enumerate(indexes, start=1):
        prefix = tool_count + counter.count(messages[: index + 1])
        rows.append(f"| {number} | {index} | {prefix:,} |")
    return [*rows, ""]


def _breakdown_table(breakdown: Mapping[str, Any] | None) -> list[str]:
    if not breakdown:
        return []
    rows = ["### Breakdown", "", "| part | tokens |", "|---|---:|"]
    for name, value in _flatten(breakdown):
        shown = f"{value:,}" if isinstance(value, int | float) else str(value)
        rows.append(f"| {name} | {shown} |")
    return [*rows, ""]


def _flatten(mapping: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    # The breakdown's shape belongs to the context engine; render any nesting of mappings.
    for key, value in mapping.items():
        name = f"{prefix} / {key}" if prefix else str(key)
        if isinstance(value, Mapping):
            yield from _flatten(value, name)
        else:
            yield name, value


def _cost_table(
    messages: list[dict[str, Any]],
    prompt_tokens: int,
    facts: ModelFacts,
    counter: TokenCounter,
    tool_count: int,
) -> list[str]:
    indexes = breakpoint_indexes(messages)
    cached = tool_count + counter.count(messages[: indexes[-1] + 1]) if indexes else 0
    fresh = prompt_tokens - cached
    write_price = facts.cache_write_cost_per_token or facts.input_cost_per_token
    read_price = facts.cache_read_cost_per_token or facts.input_cost_per_token
    no_cache = prompt_tokens * facts.input_cost_per_token
    cold = cached * write_price + fresh * facts.input_cost_per_token
    warm = cached * read_price + fresh * facts.input_cost_per_token
    output = facts.output_cost_per_token * 1000
    return [
        "### Estimated input cost",
        "",
        "| scenario | cost |",
        "|---|---:|",
        f"| no cache hits | {_dollars(no_cache)} |",
        f"| cache written ({cached:,} tokens at the write price) | {_dollars(cold)} |",
        f"| all cached prefixes read ({cached:,} tokens) | {_dollars(warm)} |",
        "",
        f"Output is extra: {_dollars(output)} per 1,000 tokens of answer.",
    ]


def _dollars(amount: float) -> str:
    return f"${amount:.4f}"
