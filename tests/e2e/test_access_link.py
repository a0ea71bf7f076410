"""A newcomer's one click: the address `acdc serve` printed lets Chromium in, the chat works
over its websocket, and the same server's plain address lets nothing in (acdc.access)."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import screenshot, send_message

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_the_printed_address_lets_the_browser_in_and_the_plain_one_does_not(server, browser):
    context = await (await browser.get()).new_context()  # no cookie of any kind
    try:
        page = await context.new_page()
        refused = await page.goto(server.url)
        assert refused is not None and refused.status == 403
        await expect(page.get_by_role("heading", name="Open the link acdc printed")).to_be_visible()
        assert not await context.cookies()  # nothing handed out that would let it in
        await screenshot(page, "access-refused")

        assert server.entry == f"{server.url}?token={server.token}"
        await page.goto(server.entry)
        await expect(page).to_have_url(re.compile(r"/s/[^/?]+/$"))  # the clean URL
        await send_message(page, "Hello through the link", "Fake reply to: Hello through")
        [cookie] = [c for c in await context.cookies() if c["name"].startswith("acdc_token")]
        assert cookie["value"] == server.token and cookie["httpOnly"]
        assert cookie["sameSite"] == "Strict"
        await screenshot(page, "access-let-in")
    finally:
        await context.close()
