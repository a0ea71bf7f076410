"""MCP servers in the page (issue 45): a server is added in Session tools → MCP servers,
starts at once (the SDK server of tests/chat/turn/mcp_support.py, over stdio in real
bubblewrap in the acdc server), and its tools show with their tokens; the model
(`acdc/fake`) calls its tool that is not read-only, the card asks, Run once runs it and the
model goes on with the answer; switching the server off makes the HUD say the next
request's cached prefix is rebuilt. Screenshots of the part and the card, light and dark,
1,400 and 390 px, go to /tmp/mcppage/shots and test-artifacts/."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from playwright.async_api import expect

from tests.chat.turn.mcp_support import SERVER
from tests.e2e.conftest import SLOW, screenshot, send_message

pytestmark = [
    pytest.mark.asyncio(loop_scope="session"),
    pytest.mark.own_server,  # its declared servers must not reach other tests' sessions
]
SHOTS = Path("/tmp/mcppage/shots")


async def shots(page, part, name: str) -> None:
    """`part` at 1400 px light and dark, and at 390 px, then back to 1400 px light."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    await page.set_viewport_size({"width": 1400, "height": 900})
    await part.scroll_into_view_if_needed()
    await part.screenshot(path=str(SHOTS / f"{name}-1400-light.png"))
    toggle = page.get_by_role("button", name="Dark mode")
    await toggle.click()
    await expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    await part.screenshot(path=str(SHOTS / f"{name}-1400-dark.png"))
    await page.set_viewport_size({"width": 390, "height": 844})
    if not await part.is_visible():
        await page.get_by_role("button", name="Context panel").click()  # folded on a phone
    await part.scroll_into_view_if_needed()
    await part.screenshot(path=str(SHOTS / f"{name}-390-dark.png"))
    await toggle.click()
    await expect(page.locator("html")).to_have_attribute("data-theme", "light")
    await part.screenshot(path=str(SHOTS / f"{name}-390-light.png"))
    await screenshot(page, f"mcp-{name}-390")
    await page.set_viewport_size({"width": 1400, "height": 900})


async def test_a_server_added_in_the_page_lists_its_tools_and_a_call_is_approved(server, page):
    (server.repo / "tiny_server.py").write_text(SERVER)
    await page.set_viewport_size({"width": 1400, "height": 900})
    await page.goto(server.session_url)
    part = page.get_by_role("region", name="MCP servers")
    await expect(part.get_by_role("list", name="Declared MCP servers")).to_contain_text(
        "None declared yet."
    )

    await part.get_by_text("Add an MCP server").click()
    await part.get_by_label("Name", exact=True).fill("tiny")
    command = f"{sys.executable} {server.repo / 'tiny_server.py'}"
    await part.get_by_label("Command (stdio)").fill(command)
    await part.get_by_role("button", name="Add and start").click()

    await expect(part.get_by_role("status")).to_have_text(
        "Declared tiny and started it: 3 tools.", timeout=SLOW
    )
    await expect(part.get_by_label("State of tiny")).to_have_text("running")
    tools = part.get_by_role("list", name="Tools of tiny")
    await expect(tools.get_by_role("listitem")).to_have_count(3)
    await expect(tools.get_by_role("listitem").filter(has_text="note")).to_contain_text("asks")
    await expect(tools.get_by_role("listitem").filter(has_text="clock")).to_contain_text(
        "read-only"
    )
    await expect(part.get_by_role("note")).to_contain_text("within the 4,000 budget")
    await shots(page, part, "mcp-panel")

    server.script_replies(
        {
            "text": "I will leave a note.",
            "tool_calls": [{"name": "mcp__tiny__note", "arguments": {"text": "hello <b>you</b>"}}],
        },
        {"text": "The note is left."},
    )
    await send_message(page, "Leave me a note.")
    reply = page.get_by_role("log", name="Conversation").get_by_role("article", name="acdc reply")
    card = reply.last.get_by_role("region", name="The model asks to call an MCP tool")
    await expect(card).to_be_visible(timeout=SLOW)
    await expect(card.get_by_label("Tool called")).to_have_text("mcp__tiny__note")
    await expect(card.get_by_label("Arguments")).to_have_text('{"text": "hello <b>you</b>"}')
    await expect(reply.last.get_by_text("waiting for you")).to_be_visible()
    for name in ("Run once", "Always allow this tool", "Deny"):
        await expect(card.get_by_role("button", name=name, exact=True)).to_be_enabled()
    await shots(page, card, "mcp-approval")

    await card.get_by_role("button", name="Run once").click()

    await expect(reply.last).to_contain_text("The note is left.", timeout=SLOW)
    await expect(reply.last.locator(".tool-output").last).to_have_text("noted: hello <b>you</b>")
    await expect(card.get_by_role("status")).to_have_text("Approved once: it runs.")
    await page.reload()  # drawn from the store: the same answer
    await expect(card.get_by_role("status")).to_have_text("Approved once: it runs.", timeout=SLOW)

    hud_note = page.locator("#hud-tools")
    await expect(hud_note).to_be_hidden()
    await part.get_by_label("On here").uncheck()
    await expect(part.get_by_role("status")).to_have_text("tiny is off for this session.")
    await expect(hud_note).to_contain_text("its cached prefix is rebuilt")
    await shots(page, page.locator("#hud"), "mcp-hud")
