"""Session tools → MCP servers over HTTP, as the page's htmx calls it, and the answer to an
MCP tool's approval card. A server added in the page starts at once (the reference
mcp-server-time, over stdio in bubblewrap) and its tools are listed with their tokens;
a repository's `.mcp.json` entry is a suggestion that starts nothing until it is added; a
switch changes what the session's next request carries, and the HUD says its cached prefix
is rebuilt; an approval is answered once."""

from __future__ import annotations

import json
import re
import sys

import pytest
from channels.db import database_sync_to_async

from chat.repo.mcp import model_calls, servers
from history.models import ToolApproval
from tests.chat.sockets import new_session

pytestmark = pytest.mark.django_db(transaction=True)
TIME = f"{sys.executable} -m mcp_server_time"
REBUILT = "its cached prefix is rebuilt"


@pytest.fixture
def mcp(served, served_root):
    connections = served.repository.mcp
    (connections.data_dir / servers.FILE_NAME).unlink(missing_ok=True)
    yield connections
    (connections.data_dir / servers.FILE_NAME).unlink(missing_ok=True)


async def post(async_client, session, action: str, data: dict) -> str:
    response = await async_client.post(f"/s/{session.id}/mcp/{action}/", data)
    assert response.status_code == 200, response.content
    return response.content.decode()


def tool_tokens(html: str, server: str) -> dict[str, int]:
    tools = html.split(f'aria-label="Tools of {server}"', 1)[1].split("</ul>", 1)[0]
    found = re.findall(r"<code>(\w+)</code>.*?<span class=\"num\">([\d,]+)</span>", tools)
    return {name: int(tokens.replace(",", "")) for name, tokens in found}


async def test_a_server_added_in_the_page_starts_and_lists_its_tools_with_tokens(async_client, mcp):
    session = await new_session()
    try:
        html = await post(async_client, session, "add", {"name": "time", "command": TIME})
        again = (await async_client.get(f"/s/{session.id}/mcp/")).content.decode()
    finally:
        await mcp.close()

    assert "Declared time and started it: 2 tools." in html
    for drawn in (html, again):
        assert 'aria-label="State of time">running</span>' in drawn
        tokens = tool_tokens(drawn, "time")
        assert set(tokens) == {"convert_time", "get_current_time"}
        assert all(n > 20 for n in tokens.values()), tokens
    assert [s.name for s in servers.declared(mcp.data_dir)] == ["time"]
    assert "within the 4,000 budget" in html


async def test_a_server_that_does_not_start_shows_failed_and_its_error(async_client, mcp):
    session = await new_session()
    broken = f"{sys.executable} -c 'raise SystemExit(\"no such thing\")'"
    try:
        html = await post(async_client, session, "add", {"name": "broken", "command": broken})
    finally:
        await mcp.close()

    assert 'aria-label="State of broken">failed</span>' in html
    assert 'aria-label="Last error of broken">broken: ' in html
    assert "Declared broken, but broken: " in html


async def test_mcp_json_entries_are_suggestions_that_start_nothing_until_added(
    async_client, mcp, served_root
):
    entry = {"command": sys.executable, "args": ["-m", "mcp_server_time"], "env": {"TZ": "x"}}
    (served_root / ".mcp.json").write_text(json.dumps({"mcpServers": {"clock": entry}}))
    session = await new_session()
    html = (await async_client.get(f"/s/{session.id}/mcp/")).content.decode()

    assert 'aria-label="Suggested MCP servers"' in html
    assert "in .mcp.json; it sets TZ" in html and 'aria-label="Add clock"' in html
    assert servers.declared(mcp.data_dir) == () and mcp.peek("clock") is None
    try:
        added = await post(async_client, session, "add", {"name": "clock", "suggested": "1"})
    finally:
        await mcp.close()
    assert "Declared clock and started it: 2 tools." in added
    [clock] = servers.declared(mcp.data_dir)
    assert clock.argv == (sys.executable, "-m", "mcp_server_time")
    assert 'aria-label="Add clock"' not in added


async def test_switching_a_server_off_changes_the_next_tools_and_the_hud_says_so(async_client, mcp):
    servers.add(mcp.data_dir, "time", argv=[sys.executable, "-m", "mcp_server_time"])
    session = await new_session(hud={"requests": 3})  # it sent requests without MCP tools
    try:
        html = (await async_client.get(f"/s/{session.id}/mcp/")).content.decode()
        assert REBUILT in html.split('id="hud-tools"', 1)[1]
        await model_calls.take(session.id, mcp)  # its next turn lists them
        listed = (await async_client.get(f"/s/{session.id}/mcp/")).content.decode()
        off = await post(async_client, session, "switch", {"name": "time"})
        taken = await model_calls.take(session.id, mcp)
    finally:
        await mcp.close()

    assert REBUILT not in listed
    assert "time is off for this session." in off
    assert REBUILT in off.split('id="hud-tools"', 1)[1]
    assert taken.tools == ()  # off: its tools leave the session's next request


async def test_removing_a_server_stops_it(async_client, mcp):
    session = await new_session()
    try:
        await post(async_client, session, "add", {"name": "time", "command": TIME})
        held = mcp.peek("time")
        html = await post(async_client, session, "remove", {"name": "time"})
    finally:
        await mcp.close()
    assert "Removed time; it is stopped." in html and "None declared yet." in html
    assert held is not None and held.state == "closed" and mcp.peek("time") is None


async def test_bad_input_is_a_message_in_the_part(async_client, mcp):
    session = await new_session()
    html = await post(async_client, session, "add", {"name": "x", "command": "", "url": ""})
    assert "Say how to reach it" in html and servers.declared(mcp.data_dir) == ()


async def test_an_approval_is_answered_once(async_client, mcp):
    session = await new_session()
    create = database_sync_to_async(ToolApproval.objects.create)
    row = await create(session=session, tool="mcp__tiny__note", arguments={"text": "hi"})
    url = f"/approvals/{row.pk}/answer/"

    first = (await async_client.post(url, {"decision": "once"})).content.decode()
    second = (await async_client.post(url, {"decision": "deny"})).content.decode()
    wrong = await async_client.post(url, {"decision": "maybe"})

    assert "Approved once: it runs." in first
    assert "answered already" in second and "Approved once" in second
    assert wrong.status_code == 400
    await database_sync_to_async(row.refresh_from_db)()
    assert row.status == "once"
