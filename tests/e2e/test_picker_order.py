"""A box's choice and the rows drawn around it: rows the server drew before it saved the
choice never undo it on the page, whatever order their answers arrive in."""

from __future__ import annotations

import asyncio
import re

import pytest
from playwright.async_api import expect

pytestmark = pytest.mark.asyncio(loop_scope="session")

# The page's own calls to fetch, counted: whether the filter asked for rows at once is then
# known without waiting to see if a request comes.
COUNT_FETCHES = """
window.__fetches = 0;
const pageFetch = window.fetch.bind(window);
window.fetch = (...args) => { window.__fetches += 1; return pageFetch(...args); };
"""


async def test_rows_drawn_before_a_choice_was_saved_do_not_undo_it(server, page):
    loop = asyncio.get_running_loop()
    choice_held, rows_asked = loop.create_future(), loop.create_future()
    held: list = []  # the select frame with the socket to pass it on, kept from the server
    stale: list = []  # rows the server drew while it had not seen the choice

    async def socket(route) -> None:
        to_server = route.connect_to_server()

        def from_page(message) -> None:
            if '"select"' in str(message) and not choice_held.done():
                held.append((to_server, message))
                choice_held.set_result(True)
            else:
                to_server.send(message)

        route.on_message(from_page)
        to_server.on_message(route.send)

    async def rows(route) -> None:
        if held:  # the server has not seen the choice: what it draws now is from before it
            stale.append((route, await route.fetch()))
            if not rows_asked.done():
                rows_asked.set_result(True)
        else:
            await route.continue_()

    await page.add_init_script(COUNT_FETCHES)
    await page.route_web_socket(re.compile(r"/ws/"), socket)
    await page.route(re.compile(r"/files/rows/"), rows)
    await page.goto(server.session_url)
    files = page.get_by_role("region", name="Files")
    readme = files.get_by_role("checkbox", name="README.md")
    other = files.get_by_role("checkbox", name="src/app.py")
    await expect(other).to_be_visible()
    await expect(page.get_by_role("button", name="Send")).to_be_enabled()  # the socket is open

    await readme.check()
    await choice_held
    fetches = await page.evaluate("window.__fetches")
    await files.get_by_role("searchbox", name="Filter files").fill("READ")
    if await page.evaluate("window.__fetches") > fetches:
        await rows_asked  # the page asked for rows while its choice was unanswered
    to_server, frame = held.pop()
    to_server.send(frame)
    await expect(files.locator("#picker-total")).to_contain_text("1 selected")  # answered
    for route, response in stale:  # rows from before the choice arrive after its answer
        await route.fulfill(response=response)

    await expect(other).to_have_count(0)  # the filter's list is on the page
    await expect(readme).to_be_checked()
    await expect(files.locator("#picker-total")).to_contain_text("1 selected")
