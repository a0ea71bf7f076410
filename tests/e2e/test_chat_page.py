"""A person chats in the browser: streaming, Stop, reload, errors."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot

pytestmark = pytest.mark.asyncio(loop_scope="session")

ANSWER = (
    "Here is **greet** from `src/app.py`:\n\n```python\ndef greet(name):\n"
    "    return f'hello {name}'\n```\n\nIt returns a greeting."
)


async def test_a_message_streams_back_and_survives_a_reload(server, page):
    server.script_replies({"text": ANSWER, "chunk_size": 8, "chunk_delay": 0.02})
    await page.goto(server.session_url)
    await page.get_by_role("textbox", name="Message").fill("What does greet do?")
    await page.get_by_role("button", name="Send").click()
    log = page.get_by_role("log", name="Conversation")
    await expect(log).to_contain_text("What does greet do?")
    await expect(log).to_contain_text("It returns a greeting.", timeout=SLOW)
    await expect(log.locator("pre")).to_contain_text("def greet(name):")
    # One button: Stop while the reply streams, Send again once it is done.
    await expect(page.get_by_role("button", name="Stop")).to_be_hidden()
    await expect(page.get_by_role("button", name="Send")).to_be_enabled()
    await expect(page.get_by_role("textbox", name="Message")).to_have_value("")
    await screenshot(page, "chat-streamed")

    await page.reload()
    await expect(log).to_contain_text("What does greet do?")
    await expect(log).to_contain_text("It returns a greeting.")


async def test_stop_keeps_the_partial_answer_marked_stopped(server, page):
    long_answer = " ".join(f"word{n}" for n in range(400))
    server.script_replies({"text": long_answer, "chunk_size": 5, "chunk_delay": 0.05})
    await page.goto(server.session_url)
    await page.get_by_role("textbox", name="Message").fill("Tell me a long story")
    await page.get_by_role("button", name="Send").click()
    log = page.get_by_role("log", name="Conversation")
    await expect(log).to_contain_text("word3", timeout=SLOW)
    stop = page.get_by_role("button", name="Stop")
    await expect(stop).to_be_enabled()
    await stop.click()
    await expect(log.get_by_text("Stopped", exact=True)).to_be_visible(timeout=SLOW)
    await expect(page.get_by_role("status")).to_contain_text("partial reply is kept")
    shown = await log.inner_text()
    assert "word399" not in shown
    await screenshot(page, "chat-stopped")

    await page.reload()
    await expect(log).to_contain_text("Tell me a long story")
    await expect(log).to_contain_text("word3")
    await expect(log.get_by_text("Stopped", exact=True)).to_be_visible()


async def test_a_provider_error_mid_stream_is_shown_and_the_partial_kept(server, page):
    server.script_replies(
        {
            "text": "The first half of the answer, then",
            "chunk_size": 6,
            "error": "server",
            "error_after": 2,
        }
    )
    await page.goto(server.session_url)
    await page.get_by_role("textbox", name="Message").fill("Break please")
    await page.keyboard.press("Enter")  # possibly before the socket is open: queued, then sent
    log = page.get_by_role("log", name="Conversation")
    await expect(log.get_by_role("alert")).to_contain_text(re.compile("failed", re.I), timeout=SLOW)
    await expect(log).to_contain_text("The first")
    await screenshot(page, "chat-error")
    await page.get_by_role("textbox", name="Message").fill("And again, fine this time")
    await page.keyboard.press("Enter")
    await expect(log).to_contain_text("Fake reply to: And again", timeout=SLOW)


async def test_an_empty_message_gets_a_clear_error(server, page):
    await page.goto(server.session_url)
    await page.get_by_role("textbox", name="Message").fill("   ")
    await page.evaluate("document.getElementById('message-input').removeAttribute('required')")
    await page.get_by_role("button", name="Send").click()
    await expect(page.get_by_role("alert")).to_contain_text("empty")


async def test_enter_pressed_while_not_connected_sends_once_connected(server, page):
    words = " ".join(f"slow words {n}" for n in range(60))
    server.script_replies({"text": words, "chunk_size": 6, "chunk_delay": 0.1})
    await page.goto(server.session_url)
    send = page.get_by_role("button", name="Send")
    await expect(send).to_be_enabled()
    # What htmx's ws extension reports when the socket drops (e.g. a server restart).
    await page.evaluate(
        "document.body.dispatchEvent(new CustomEvent('htmx:wsClose', {bubbles: true}))"
    )
    await expect(send).to_be_disabled()
    await page.get_by_role("textbox", name="Message").fill("Sent early")
    await page.keyboard.press("Enter")
    await expect(page.get_by_role("status")).to_contain_text("sent as soon as it can be")
    log = page.get_by_role("log", name="Conversation")
    await expect(log).not_to_contain_text("Sent early")
    await page.evaluate(
        "document.body.dispatchEvent(new CustomEvent('htmx:wsOpen', {bubbles: true}))"
    )
    await expect(log).to_contain_text("slow words", timeout=SLOW)
    # While the reply streams the status line no longer says it is connecting.
    await expect(page.get_by_role("button", name="Stop")).to_be_visible()
    assert "Connecting" not in await page.get_by_role("status").inner_text()
