"""The official MCP SDK's client parts, imported where the first server starts (`client`):
the import takes about 0.4 s, which a start of acdc without MCP servers does not pay."""

from __future__ import annotations

import httpx2
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

# What `client` reads from here.
EXPORTED = (ClientSession, StdioServerParameters, httpx2, stdio_client, streamable_http_client)
