"""The person's MCP servers: their declarations in acdc's data (`servers`), a repository's
`.mcp.json` read as suggestions only (`mcpjson`), and the connections to them
(`client`: stdio servers in the commands' sandbox, Streamable HTTP ones by URL).
"""
