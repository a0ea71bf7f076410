"""Project instructions in the Context panel: named with their tokens, switched off per
session, and what the model receives follows the switch, also after a reload."""

from __future__ import annotations

import json
import re

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot, send_message

pytestmark = pytest.mark.asyncio(loop_scope="session")
RULE = "Always answer in French, and run the tests first."


def sent_for(server, text: str) -> str:
    """The system message of the last request the model received for the message `text`."""
    record = server.data_dir.parent / "requests.jsonl"
    for line in reversed(record.read_text().splitlines()):
        request = json.loads(line)
        if text in json.dumps(request["messages"][-1]):
            system = request["messages"][0]
            assert system["role"] == "system"
            return json.dumps(system)
    raise AssertionError(f"no request for {text!r} was recorded")


@pytest.mark.server_env(ACDC_RECORD_REQUESTS="{tmp}/requests.jsonl")
async def test_instructions_are_listed_switched_off_and_stay_off_after_a_reload(server, page):
    (server.repo / "AGENTS.md").write_text(f"# Working here\n\n{RULE}\n")
    await page.goto(server.session_url)
    hud = page.get_by_role("region", name="Context")
    listed = hud.get_by_role("list", name="Instructions")
    switch = hud.get_by_role("checkbox", name="Send project instructions")
    # Seen, and could be switched off, before anything is sent.
    await expect(switch).to_be_checked()
    await expect(listed.get_by_role("listitem")).to_have_text(re.compile(r"^AGENTS\.md\s*\d+$"))
    await send_message(page, "First question", answered="Fake reply to: First question")
    assert RULE in sent_for(server, "First question")
    await expect(listed.get_by_role("listitem")).to_have_text(re.compile(r"^AGENTS\.md\s*\d+$"))
    await expect(switch).to_be_checked()
    await expect(hud.get_by_role("list").first).to_contain_text("Instructions")
    await screenshot(page, "instructions-on-light")
    await page.emulate_media(color_scheme="dark")
    await screenshot(page, "instructions-on-dark")
    await page.emulate_media(color_scheme="light")

    other = await page.context.new_page()  # another tab of the session, connected
    await other.goto(server.session_url)
    await expect(other.get_by_role("button", name="Send", exact=True)).to_be_enabled(timeout=SLOW)

    other_switch = other.get_by_role("region", name="Context").get_by_role(
        "checkbox", name="Send project instructions"
    )
    await other.bring_to_front()
    await other_switch.focus()
    await switch.uncheck()
    await expect(listed).to_contain_text("off for this session")
    await expect(switch).not_to_be_checked()
    # The other tab follows without a reload, and its redrawn panel keeps the focus.
    await expect(other_switch).not_to_be_checked(timeout=SLOW)
    await expect(other_switch).to_be_focused()
    await other.close()
    await send_message(page, "Second question", answered="Fake reply to: Second question")
    sent = sent_for(server, "Second question")
    assert RULE not in sent and "Project instructions" not in sent

    await page.reload()
    hud = page.get_by_role("region", name="Context")
    await expect(hud.get_by_role("checkbox", name="Send project instructions")).not_to_be_checked()
    await expect(hud.get_by_role("list", name="Instructions")).to_contain_text(
        "off for this session"
    )
    await page.set_viewport_size({"width": 800, "height": 860})
    await screenshot(page, "instructions-off-800")

    switch = hud.get_by_role("checkbox", name="Send project instructions")
    await switch.focus()
    await page.keyboard.press("Space")  # by keyboard
    await expect(hud.get_by_role("list", name="Instructions")).to_contain_text(
        re.compile(r"AGENTS\.md\s*\d+"), timeout=SLOW
    )
    await expect(switch).to_be_checked()
    await expect(switch).to_be_focused()  # the redrawn panel keeps the focus on the switch
    await send_message(page, "Third question", answered="Fake reply to: Third question")
    assert RULE in sent_for(server, "Third question")
