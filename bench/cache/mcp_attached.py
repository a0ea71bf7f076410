"""`acdc bench cache --mcp all|deferred`: the in-process replays with an MCP server attached.

The reference mcp-server-time is declared in the replay's data folder (stdio, in the
commands' sandbox), so every replayed session lists its tools once and carries the MCP
part of `tools` after acdc's own: `search_tools`, `call_tool` and, with `all`, the
server's two definitions (they fit ACDC_MCP_TOOL_TOKENS); with `deferred` the budget is 0,
so only the two fixed tools are there. `tools_line` says what the first request carried,
in tokens (cl100k, as the definitions are counted for the budget).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.test import override_settings

from contextcore.tokens import TokenCounter

SERVER = "time"


@contextmanager
def mcp_attached(mode: str | None, data_dir: Path) -> Iterator[None]:
    if mode is None:
        yield
        return
    from chat.repo.mcp import servers  # Django is set up by now

    servers.add(data_dir, SERVER, argv=[sys.executable, "-m", "mcp_server_time"])
    budget = {"ACDC_MCP_TOOL_TOKENS": 0} if mode == "deferred" else {}
    with override_settings(**budget):
        yield


def tools_line(mode: str | None, tools: list[dict[str, Any]] | None, counter: TokenCounter) -> str:
    """What the first request's `tools` held: acdc's own, then the MCP part, in tokens."""
    tools = tools or []
    names = [t.get("function", {}).get("name", "") for t in tools]
    start = names.index("search_tools") if "search_tools" in names else len(tools)
    own, mcp = tools[:start], tools[start:]
    count = lambda part: counter.count(json.dumps(part)) if part else 0  # noqa: E731
    said = f"MCP: {mode}" if mode else "no MCP server"
    return (
        f"Tools in every request ({said}): {len(own)} of acdc's, {count(own):,} tokens; "
        f"MCP part {', '.join(names[start:]) or 'none'}: {count(mcp):,} tokens."
    )
