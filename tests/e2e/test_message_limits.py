"""A message too large to send stays in the box, with the reason, and the socket stays.

The page checks a message against the server's limits before it leaves (characters and
the frame's bytes); a page drawn with older limits than the server now has sends it
anyway, and gets it back: from the server's error frame, or, over even Daphne's limit,
from the closed socket, which connects again. Each time a short message then streams.
"""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot

pytestmark = pytest.mark.asyncio(loop_scope="session")

FRAME_LIMIT = 100_000  # bytes, on the server of the last two tests


async def _ready(page, server):
    await page.goto(server.session_url)
    await expect(page.get_by_role("button", name="Send", exact=True)).to_be_enabled(timeout=SLOW)
    return page.get_by_role("textbox", name="Message")


async def _box_length(box) -> int:
    return await box.evaluate("(el) => el.value.length")


async def _a_short_message_streams(page, box) -> None:
    await box.fill("A short one")
    await expect(page.get_by_role("alert").filter(has_text="to send")).to_be_hidden()
    await page.get_by_role("button", name="Send", exact=True).click()
    log = page.get_by_role("log", name="Conversation")
    await expect(log).to_contain_text("Fake reply to: A short one", timeout=SLOW)
    await expect(box).to_have_value("")


async def test_a_3_mb_message_is_refused_in_the_page_and_stays_in_the_box(server, page):
    box = await _ready(page, server)
    await box.fill("x" * 3_000_000)

    await page.get_by_role("button", name="Send", exact=True).click()

    alert = page.get_by_role("alert").filter(has_text="too long to send")
    await expect(alert).to_have_text(
        "The message is too long to send (3,000,000 characters; at most 200,000). "
        "It is still in the box."
    )
    assert await _box_length(box) == 3_000_000
    await screenshot(page, "message-limits-too-long")
    await expect(page.get_by_role("log", name="Conversation")).not_to_contain_text("xxxx")
    await _a_short_message_streams(page, box)


@pytest.mark.server_env(ACDC_MAX_FRAME_BYTES=str(FRAME_LIMIT))
async def test_a_message_over_the_frame_s_bytes_is_refused_before_it_leaves(server, page):
    box = await _ready(page, server)
    await box.fill("€" * 50_000)  # 50,000 characters, 150 kB in UTF-8

    await box.press("Enter")

    await expect(page.get_by_role("alert").filter(has_text="too large to send")).to_have_text(
        "The message is too large to send (150 kB; at most 100 kB). It is still in the box."
    )
    assert await _box_length(box) == 50_000
    await _a_short_message_streams(page, box)


@pytest.mark.server_env(ACDC_MAX_FRAME_BYTES=str(FRAME_LIMIT))
async def test_a_page_drawn_with_larger_limits_gets_a_refused_message_back(server, page):
    box = await _ready(page, server)
    # As if the server had restarted with smaller limits since this page was drawn.
    larger = "{maxMessageChars: '9000000', maxFrameBytes: '90000000'}"
    await box.evaluate(f"(el) => Object.assign(el.form.dataset, {larger})")
    log = page.get_by_role("log", name="Conversation")

    await box.fill("y" * 150_000)  # over acdc's limit, under Daphne's: the consumer says why
    await page.get_by_role("button", name="Send", exact=True).click()
    await expect(log.get_by_role("alert")).to_contain_text(
        "The message is too large (150 kB; at most 100 kB): nothing in it was used."
    )
    await expect(box).to_have_value("y" * 150_000)

    await box.fill("z" * 600_000)  # over Daphne's own limit: the socket closes with 1009
    await page.get_by_role("button", name="Send", exact=True).click()
    await expect(page.get_by_role("alert").filter(has_text="closed the connection")).to_have_text(
        "The server refused the message as too large and closed the connection; the message "
        "is back in the box."
    )
    await expect(box).to_have_value("z" * 600_000)
    await screenshot(page, "message-limits-socket-closed")
    await expect(page.get_by_role("status").filter(has_text="Connected.")).to_be_visible()
    await _a_short_message_streams(page, box)
