"""A person types while a reply streams: one button (Stop, then Send), nothing typed is lost.

Enter while the reply streams neither sends nor clears the box; a message the server refuses
comes back to the box; Up-arrow in an empty box recalls the last message sent.
"""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot

pytestmark = pytest.mark.asyncio(loop_scope="session")

# Long enough (about seven seconds) to type into the box while it streams.
SLOW_REPLY = {
    "text": " ".join(f"word{n}" for n in range(200)),
    "chunk_size": 10,
    "chunk_delay": 0.05,
}


def _collect_errors(page) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return errors


async def _start_slow_reply(page, text: str) -> None:
    await expect(page.get_by_role("button", name="Send", exact=True)).to_be_enabled(timeout=SLOW)
    await page.get_by_role("textbox", name="Message").fill(text)
    await page.get_by_role("button", name="Send", exact=True).click()
    log = page.get_by_role("log", name="Conversation")
    await expect(log).to_contain_text("word1", timeout=SLOW)


async def test_text_typed_while_a_reply_streams_stays_in_the_box_until_sent(server, page):
    errors = _collect_errors(page)
    server.script_replies(SLOW_REPLY)
    await page.goto(server.session_url)
    box = page.get_by_role("textbox", name="Message")
    send = page.get_by_role("button", name="Send", exact=True)
    stop = page.get_by_role("button", name="Stop", exact=True)
    log = page.get_by_role("log", name="Conversation")
    await expect(stop).to_be_hidden()
    await _start_slow_reply(page, "Tell me a long story")

    await expect(stop).to_be_enabled()
    await expect(send).to_be_hidden()
    await box.fill("And a follow-up")
    await box.press("Enter")
    await expect(stop).to_be_visible()  # so Enter was pressed while the reply streamed
    await expect(box).to_have_value("And a follow-up")
    await screenshot(page, "send-stop-streaming")

    await expect(log).to_contain_text("word199", timeout=SLOW)
    await expect(send).to_be_enabled()
    await expect(stop).to_be_hidden()
    await expect(box).to_have_value("And a follow-up")
    await expect(log).not_to_contain_text("And a follow-up")

    await box.press("Enter")
    await expect(log).to_contain_text("Fake reply to: And a follow-up", timeout=SLOW)
    await expect(box).to_have_value("")
    await box.press("ArrowUp")
    await expect(box).to_have_value("And a follow-up")
    caret = await box.evaluate("(el) => [el.selectionStart, el.selectionEnd, el.value.length]")
    assert caret == [len("And a follow-up")] * 3
    await box.press("ArrowUp")  # not empty now: the caret moves, the text stays
    await expect(box).to_have_value("And a follow-up")
    assert errors == []


async def test_esc_stops_the_reply_and_the_button_is_send_again(server, page):
    errors = _collect_errors(page)
    server.script_replies(SLOW_REPLY)
    await page.goto(server.session_url)
    await _start_slow_reply(page, "Another long story")
    box = page.get_by_role("textbox", name="Message")
    await box.fill("Typed before Esc")
    await box.press("Escape")
    log = page.get_by_role("log", name="Conversation")
    await expect(log.get_by_text("Stopped", exact=True)).to_be_visible(timeout=SLOW)
    await expect(page.get_by_role("button", name="Send", exact=True)).to_be_enabled()
    await expect(page.get_by_role("button", name="Stop", exact=True)).to_be_hidden()
    await expect(box).to_have_value("Typed before Esc")
    assert errors == []


async def test_a_refused_message_comes_back_to_the_box(server, page):
    errors = _collect_errors(page)
    server.script_replies(SLOW_REPLY)
    await page.goto(server.session_url)
    await _start_slow_reply(page, "A long story, please")
    # As in a tab that sends just before another tab's reply starts: this page has not
    # yet heard that a reply streams, so it shows Send and the server refuses the message.
    await page.evaluate("document.getElementById('stop-button').disabled = true")
    box = page.get_by_role("textbox", name="Message")
    await box.fill("Sent too soon")
    await page.get_by_role("button", name="Send", exact=True).click()
    log = page.get_by_role("log", name="Conversation")
    await expect(log.get_by_role("alert")).to_contain_text("still being written")
    await expect(box).to_have_value("Sent too soon")
    await expect(log.get_by_role("article", name="Your message")).to_have_count(1)
    await expect(log).to_contain_text("word199", timeout=SLOW)
    assert errors == []


async def test_a_message_sent_in_a_second_tab_while_the_first_streams_says_why(server, page):
    errors = _collect_errors(page)
    server.script_replies(SLOW_REPLY)
    await page.goto(server.session_url)
    other = await page.context.new_page()
    errors += _collect_errors(other)
    await other.goto(server.session_url)
    await _start_slow_reply(page, "A long story, please")

    box = other.get_by_role("textbox", name="Message")
    await expect(other.get_by_role("log", name="Conversation")).to_contain_text(
        "word1", timeout=SLOW
    )
    await box.fill("Meanwhile, in the other tab")
    await box.press("Enter")
    await expect(other.get_by_role("status").filter(has_text="still being written")).to_have_text(
        "A reply is still being written in another tab; wait for it or press Stop."
    )
    await expect(box).to_have_value("Meanwhile, in the other tab")
    # The tab that sent it is told without "another tab".
    await page.get_by_role("textbox", name="Message").fill("And more")
    await page.get_by_role("textbox", name="Message").press("Enter")
    await expect(page.get_by_role("status").filter(has_text="still being written")).to_have_text(
        "A reply is still being written; wait for it or press Stop."
    )
    await expect(page.get_by_role("log", name="Conversation")).to_contain_text(
        "word199", timeout=SLOW
    )
    await other.close()
    assert errors == []
