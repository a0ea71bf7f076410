"""What Session tools → MCP servers shows, and the HUD's note that the tools changed.

Each declared server: how it is reached, whether this session uses it, its state as the
process's connection knows it (or as the session's snapshot last found it), its last error,
and its tools with the tokens each definition costs in every request; then whether the
session's MCP definitions fit ACDC_MCP_TOOL_TOKENS (in `tools`) or are reached through
`search_tools`. Nothing here starts a server or reads the database.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from types import MappingProxyType

from django.conf import settings
from django.template.loader import render_to_string

from chat.repo.mcp import model_calls, offer, switches
from chat.repo.mcp.client import Connection, Connections
from chat.repo.mcp.mcpjson import suggest
from chat.repo.mcp.servers import Server, declared
from chat.session import setup

STATES = MappingProxyType(
    {
        "stopped": "not started",
        "closed": "not started",
        "starting": "starting",
        "ready": "running",
        "failed": "failed",
    }
)


def part_context(
    session_id: str,
    connections: Connections,
    count: Callable[[str], int],
    *,
    error: str = "",
    note: str = "",
    typed=None,
) -> dict:
    """The part's fields; `count` counts tokens as the tool definitions are counted."""
    data = connections.data_dir
    off = switches.switched_off(data, session_id)
    taken = model_calls.kept(data, session_id)
    rows = [
        _server(s, s.name not in off, connections.peek(s.name), taken, count)
        for s in declared(data)
    ]
    used = [t for row in rows if row["on"] for t in row["listed"]]
    definitions = json.dumps([t.definition() for t in sorted(used, key=lambda t: t.name)])
    budget = int(getattr(settings, "ACDC_MCP_TOOL_TOKENS", 4000))
    return {
        "session_id": session_id,
        "servers": rows,
        "budget": budget,
        "used_tokens": count(definitions) if used else 0,
        "used_tools": len(used),
        "suggestions": suggest(connections.root, frozenset(s.name for s in declared(data))),
        "mcp_error": error,
        "mcp_note": note,
        "typed": typed or {},
    }


def _server(server: Server, on: bool, held: Connection | None, taken, count) -> dict:
    if held is not None and held.listed is not None:
        listed = offer.listed(server.name, held.listed)
    else:
        listed = tuple(t for t in taken.tools if t.server == server.name)
    failure = next((f for f in taken.failures if f.startswith(f"{server.name}:")), "")
    state = STATES.get(held.state, held.state) if held is not None else "not started"
    error = (held.last_error if held is not None else "") or failure
    if held is None and failure:
        state = "failed"
    return {
        "server": server,
        "on": on,
        "state": state,
        "error": error,
        "listed": listed,
        "tools": [
            {
                "name": t.tool,
                "full": t.name,
                "description": t.description,
                "read_only": t.read_only,
                "tokens": count(json.dumps(t.definition())),
            }
            for t in listed
        ],
    }


def hud_note(session_id: str, *, sent: bool, oob: bool = False) -> str:
    """The HUD's line on the tools (`sent`: the session sent a request already)."""
    shown = setup.mcp_change_note(session_id, sent=sent)
    return render_to_string("chat/_hud_tools.html", {"note": shown, "oob": oob})
