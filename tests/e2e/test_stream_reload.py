"""A long code-heavy reply as a person sees it: it streams, its code is highlighted, and it
reads the same live, after a reload in the middle of it, and after a reload once it ended
(the finished frame keeps the streamed body instead of sending it again)."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from bench.stream.stream_bench import code_heavy_answer
from tests.e2e.conftest import SLOW, screenshot

pytestmark = pytest.mark.asyncio(loop_scope="session")

ANSWER = code_heavy_answer(4)
END = "That is the whole change."


async def ask(server, page, delay: float):
    server.script_replies({"text": ANSWER, "chunk_size": 40, "chunk_delay": delay})
    await page.goto(server.session_url)
    await page.get_by_role("textbox", name="Message").fill("Show me the whole change.")
    await page.get_by_role("button", name="Send").click()
    return page.get_by_role("log", name="Conversation")


async def reply_text(log) -> str:
    return await log.locator("article.assistant").last.locator(":scope > .body").inner_text()


async def test_a_streamed_reply_reads_the_same_live_and_after_a_reload(server, page):
    log = await ask(server, page, 0.01)
    await expect(log).to_contain_text(END, timeout=SLOW)
    await expect(page.get_by_role("button", name="Stop")).to_be_hidden()
    reply = log.locator("article.assistant").last
    await expect(reply.locator(".tail")).to_have_count(0)  # the rest took the tail's place
    assert await reply.locator("pre span.k").count() > 0  # highlighted
    live = await reply_text(log)
    await screenshot(page, "stream-finished-live")
    await page.reload()
    await expect(log).to_contain_text(END)
    assert await reply_text(log) == live


async def test_a_reload_in_the_middle_of_a_reply_shows_all_of_it_once_it_ends(server, page):
    log = await ask(server, page, 0.05)
    reply = log.locator("article.assistant").last
    await expect(reply.locator("pre span.k").first).to_be_visible(timeout=SLOW)
    await screenshot(page, "stream-mid")
    assert await page.get_by_role("button", name="Stop").is_visible()  # still streaming
    await page.reload()
    await expect(log).to_contain_text(END, timeout=SLOW)
    await expect(page.get_by_role("button", name="Stop")).to_be_hidden()
    joined = await reply_text(log)
    await screenshot(page, "stream-finished-after-reload")
    await page.reload()
    await expect(log).to_contain_text(END)
    assert await reply_text(log) == joined
    assert "def step_" in joined and "tier %s holds %d files" in joined
