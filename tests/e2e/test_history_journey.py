"""Issue 4's whole journey in one go: paste, send, reload, find it in History, load it."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot
from tests.e2e.test_images import PASTE_A_CANVAS

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_a_pasted_image_is_found_again_in_history_and_loaded_back(server, page):
    server.script_replies({"text": "That diagram shows the quokka pipeline."})
    await page.goto(server.session_url)
    await page.evaluate(PASTE_A_CANVAS)
    tray = page.get_by_role("group", name="Pending attachments")
    await expect(tray.get_by_role("img", name="Pending image 160×90")).to_be_visible()
    await page.get_by_role("textbox", name="Message").fill("Explain the quokka diagram")
    await page.get_by_role("button", name="Send").click()
    log = page.get_by_role("log", name="Conversation")
    await expect(log).to_contain_text("quokka pipeline", timeout=SLOW)
    await expect(log.locator("img").first).to_be_visible()

    await page.reload()
    await expect(log.locator("img").first).to_be_visible()
    await page.get_by_role("link", name="History").click()
    await page.get_by_role("searchbox", name="Search history").fill("quokka")
    hits = page.get_by_role("list", name="Matching messages")
    await expect(hits.locator("mark").first).to_have_text(re.compile("quokka", re.I))
    thumb = hits.get_by_role("img", name="Image 1 in this message")
    await expect(thumb).to_be_visible()
    assert await thumb.evaluate("img => img.naturalWidth") > 0  # the thumbnail really loads
    await screenshot(page, "history-journey-search")

    await hits.get_by_role("link").first.click()
    await page.get_by_role("button", name="Load into chat").click()
    await expect(log).to_contain_text("Explain the quokka diagram")
    await expect(log.locator("img").first).to_be_visible()
    await screenshot(page, "history-journey-loaded")
