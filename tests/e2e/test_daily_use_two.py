"""Daily use, round two (issue 23): a provider retry counts down in the reply, the model box
says at once what it knows of a name, the Files panel keeps names whole and ranks what the
filter finds, and small layout faults at 800 px and 900 px high."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot, send_message

pytestmark = pytest.mark.asyncio(loop_scope="session")

LONG_ANSWER = " ".join(f"word{n}" for n in range(80))


async def test_a_provider_retry_counts_down_in_the_reply_until_the_answer_streams(server, page):
    server.script_replies(
        {"error": "rate_limit", "retry_after": 3},
        {"text": LONG_ANSWER, "chunk_size": 6, "chunk_delay": 0.15},
    )
    await page.goto(server.session_url)
    await send_message(page, "Is anyone there?")
    reply = page.get_by_role("article", name="acdc reply")
    note = reply.get_by_role("status").filter(has_text="Rate limited by the provider")
    await expect(note).to_have_text(
        re.compile(r"Rate limited by the provider; retrying in [123] s \(attempt 2 of up to 4\)")
    )
    await screenshot(page, "retry-countdown")
    await expect(note).to_contain_text("retrying in 1 s")  # it counts down in the page
    await expect(reply).to_contain_text("word0", timeout=SLOW)
    await expect(note).to_be_hidden()  # gone as the answer streams, before it ends
    await expect(reply.get_by_text("Streaming…")).to_be_visible()
    await expect(reply).to_contain_text("word79", timeout=SLOW)
    await expect(page.get_by_role("alert").filter(has_text="Rate limited")).to_have_count(0)
