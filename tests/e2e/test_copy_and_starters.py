"""Copy buttons on messages and code blocks, and starter suggestions in an empty session.

A reply streamed in after the page loaded gets its Copy buttons once it finishes; a page
loaded later shows them for the stored messages too. What is copied is read back from the
clipboard. A starter only fills the message box: nothing is sent until the person sends.
"""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot

pytestmark = pytest.mark.asyncio(loop_scope="session")

CODE = 'def greet(name):\n    return f"hello {name}"'
REPLY = f"Here is the function:\n\n```python\n{CODE}\n```\n\nIt greets **one** person."


def _collect_errors(page) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return errors


async def _clipboard(page) -> str:
    return await page.evaluate("navigator.clipboard.readText()")


async def test_a_starter_fills_the_box_and_sends_nothing(server, page):
    errors = _collect_errors(page)
    await page.goto(server.session_url)
    suggestions = page.get_by_role("group", name="Suggestions")
    await expect(suggestions.get_by_role("button")).to_have_count(4)
    await screenshot(page, "starters-empty-session")

    await suggestions.get_by_role("button", name="What changed since the last commit?").click()
    box = page.get_by_role("textbox", name="Message")
    await expect(box).to_have_value("What changed since the last commit?")
    await expect(box).to_be_focused()
    log = page.get_by_role("log", name="Conversation")
    await expect(log.get_by_role("article")).to_have_count(0)

    await expect(page.get_by_role("button", name="Send", exact=True)).to_be_enabled(timeout=SLOW)
    await box.press("Enter")
    await expect(log).to_contain_text(
        "Fake reply to: What changed since the last commit?", timeout=SLOW
    )
    await expect(suggestions).to_be_hidden()
    assert errors == []


async def test_copy_buttons_copy_a_streamed_reply_its_code_and_the_question(server, page):
    errors = _collect_errors(page)
    await page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    server.script_replies({"text": REPLY, "chunk_size": 8, "chunk_delay": 0.01})
    await page.goto(server.session_url)
    await expect(page.get_by_role("button", name="Send", exact=True)).to_be_enabled(timeout=SLOW)
    await page.get_by_role("textbox", name="Message").fill("Show me greet")
    await page.get_by_role("button", name="Send", exact=True).click()

    reply = page.get_by_role("article", name="acdc reply")
    await expect(reply).to_contain_text("It greets one person.", timeout=SLOW)
    copy_code = reply.get_by_role("button", name="Copy code")
    await expect(copy_code).to_be_visible()
    await copy_code.click()
    await expect(copy_code).to_have_text("Copied")
    await expect(page.get_by_role("status").filter(has_text="Code copied")).to_be_attached()
    assert await _clipboard(page) == CODE
    await screenshot(page, "copy-code-copied")
    await expect(copy_code).to_have_text("Copy")

    await reply.get_by_role("button", name="Copy message").click()
    await expect(reply.get_by_role("button", name="Copy message")).to_have_text("Copied")
    copied = await _clipboard(page)
    assert copied.startswith("Here is the function:")
    assert CODE in copied
    assert copied.endswith("It greets one person.")
    assert "Copy" not in copied

    question = page.get_by_role("article", name="Your message")
    await question.get_by_role("button", name="Copy message").click()
    assert await _clipboard(page) == "Show me greet"

    await page.reload()  # stored messages get their buttons on page load
    reply = page.get_by_role("article", name="acdc reply")
    await expect(reply.get_by_role("button", name="Copy code")).to_have_count(1)
    await expect(reply.get_by_role("button", name="Copy message")).to_have_count(1)
    await reply.get_by_role("button", name="Copy code").click()
    await expect(reply.get_by_role("button", name="Copy code")).to_have_text("Copied")
    assert await _clipboard(page) == CODE
    await screenshot(page, "copy-after-reload")
    assert errors == []
