"""A small MCP server written with the SDK for the turn and page tests: `note` (not
read-only: the person is asked), `clock` (read-only) and `grow` (read-only), which adds the
tool `fresh_gauge` and sends notifications/tools/list_changed."""

from __future__ import annotations

import sys
from pathlib import Path

from chat.repo.mcp import servers

SERVER = '''
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp_types import ToolAnnotations

server = MCPServer("tiny")

@server.tool()
def note(text: str) -> str:
    """Write a note for the developer."""
    return "noted: " + text

@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def clock() -> str:
    """Tell the time of the test clock."""
    return "12:00"

def fresh_gauge(unit: str) -> str:
    return "fresh gauge: 7 " + unit

@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def grow(ctx: Context) -> str:
    """Add a tool."""
    server.add_tool(
        fresh_gauge,
        description="Read the fresh pressure gauge.",
        annotations=ToolAnnotations(read_only_hint=True),
    )
    await ctx.session.send_tool_list_changed()
    return "grown"

server.run()
'''


def declare_tiny(data_dir: Path, root: Path, name: str = "tiny") -> servers.Server:
    (root / "tiny_server.py").write_text(SERVER)
    return servers.add(data_dir, name, argv=[sys.executable, str(root / "tiny_server.py")])
