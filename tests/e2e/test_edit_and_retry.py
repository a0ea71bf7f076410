"""Edit and resend the last message (a new version of it); Retry a reply that failed or
was cut short."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot, send_message

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_the_last_message_can_be_edited_and_resent(server, page):
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    await page.goto(server.session_url)
    log = page.get_by_role("log", name="Conversation")
    box = page.get_by_role("textbox", name="Message")
    edit = log.get_by_role("button", name="Edit your last message")
    await send_message(page, "How do I greet Bob?")
    await expect(log).to_contain_text("Fake reply to: How do I greet Bob?", timeout=SLOW)
    await send_message(page, "And Carol?")
    await expect(log).to_contain_text("Fake reply to: And Carol?", timeout=SLOW)
    await expect(edit).to_have_count(1)  # on the last message only

    # Edit puts the text back; Cancel (or Esc) gives the box back what it held.
    await box.fill("half a thought")
    await edit.click()
    await expect(box).to_have_value("And Carol?")
    await expect(
        page.get_by_role("status").filter(has_text="Editing your last message")
    ).to_be_visible()
    await page.get_by_role("button", name="Cancel edit").click()
    await expect(box).to_have_value("half a thought")
    await expect(page.get_by_text("Editing your last message")).to_be_hidden()

    await edit.click()
    await box.fill("And Alice?")
    for width in (1400, 800):
        await page.set_viewport_size({"width": width, "height": 860})
        await screenshot(page, f"edit-last-message-{width}")
    await page.set_viewport_size({"width": 1280, "height": 860})
    await page.get_by_role("button", name="Send", exact=True).click()
    await expect(log).to_contain_text("Fake reply to: And Alice?", timeout=SLOW)
    # The earlier version is kept as a version of the message, not folded in.
    versions = log.get_by_role("navigation", name="Versions of this message")
    await expect(versions).to_contain_text("Version 2 of 2", timeout=SLOW)
    await expect(log).not_to_contain_text("And Carol?")
    await expect(box).to_have_value("")
    await expect(edit).to_have_count(1)
    mine = log.get_by_role("article", name="Your message")
    await expect(mine.last).to_contain_text("And Alice?")
    await expect(mine.last.get_by_role("button", name="Edit your last message")).to_be_visible()

    # A reload shows the same, and the model's next request never saw Carol.
    await page.reload()
    await expect(versions).to_contain_text("Version 2 of 2")
    await expect(edit).to_have_count(1)
    await send_message(page, "Who did I ask about?")
    await expect(log).to_contain_text("Fake reply to: Who did I ask about?", timeout=SLOW)
    assert errors == []


async def test_retry_sends_a_failed_message_again(server, page):
    server.script_replies(
        {"text": "Half an answer", "chunk_size": 5, "error": "server", "error_after": 1},
        "The whole answer this time.",
    )
    await page.goto(server.session_url)
    log = page.get_by_role("log", name="Conversation")
    await send_message(page, "Explain the parser")
    await expect(log.get_by_role("alert")).to_contain_text(re.compile("failed", re.I), timeout=SLOW)
    await screenshot(page, "retry-offered")
    await log.get_by_role("button", name="Retry").click()
    await expect(log).to_contain_text("The whole answer this time.", timeout=SLOW)
    # The failed exchange is set aside (kept, folded as an earlier attempt), with no notice.
    folded = log.locator("details.fold-retried")
    await expect(folded).to_have_count(1)
    await expect(folded).to_contain_text("Explain the parser")
    await expect(log).not_to_contain_text("Your last message was edited")
    await expect(log).not_to_contain_text("set aside by a rollback")
    await expect(log.locator(":scope > article.message.user")).to_have_count(1)
    assert await log.get_by_role("article", name="Your message").last.inner_text() != ""
    await expect(log.get_by_role("article", name="Your message").last).to_contain_text(
        "Explain the parser"
    )
