"""A part drawn again from the server never undoes what the person did after it was drawn
(static/acdc/acts.js). Each test holds one request or answer at the network so that the
order a loaded machine sometimes makes happens every time: a redraw drawn before the
person's next change reaches the tab after it."""

from __future__ import annotations

import asyncio

import pytest
from playwright.async_api import expect

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def _count_frames(page, containing: str) -> None:
    await page.evaluate(
        """(containing) => {
            window.__frames = 0;
            document.addEventListener("htmx:wsAfterMessage", (event) => {
                if (String(event.detail.message).includes(containing)) window.__frames += 1;
            });
        }""",
        containing,
    )


class _Held:
    """The first request to a route waits at the network until `draw()`, when the server
    answers it (and, when `frame` is given, the tab gets that frame); the answer reaches
    the tab at `deliver()`. Later requests pass."""

    def __init__(self, page, frame: str | None = None) -> None:
        self.page, self.frame = page, frame
        self.arrived, self.again = asyncio.Event(), asyncio.Event()
        self.drawing, self.drawn, self.delivering = (
            asyncio.Event(),
            asyncio.Event(),
            asyncio.Event(),
        )
        self.count = 0

    async def handle(self, route) -> None:
        self.count += 1
        if self.count > 1:
            self.again.set()
            await route.continue_()
            return
        self.arrived.set()
        await self.drawing.wait()
        answer = await route.fetch()  # the server has saved it and sent its frame
        if self.frame:
            await self.page.wait_for_function("() => window.__frames > 0")
        self.drawn.set()
        await self.delivering.wait()
        await route.fulfill(response=answer)

    async def draw(self) -> None:
        self.drawing.set()
        await asyncio.wait_for(self.drawn.wait(), 60)

    async def release(self) -> None:
        await self.draw()
        self.delivering.set()


async def _click_twice_with_the_first_held(page, switch, held: _Held) -> None:
    await switch.click()
    await asyncio.wait_for(held.arrived.wait(), 30)
    await switch.click()  # htmx queues this one behind the first, still out
    await expect(switch).not_to_be_checked()
    await held.release()


async def test_the_auto_apply_switch_clicked_on_and_off_stays_off(server, page):
    await page.goto(server.session_url)
    await _count_frames(page, 'id="auto-apply-form"')
    held = _Held(page, frame="auto-apply-form")
    await page.route("**/auto-apply/", held.handle)
    switch = page.get_by_role("checkbox", name="Auto-apply edits")
    await _click_twice_with_the_first_held(page, switch, held)
    await page.wait_for_function("() => window.__frames >= 2")  # the second click's frame
    await expect(switch).not_to_be_checked()
    await page.unroute("**/auto-apply/")
    await page.reload()
    await expect(switch).not_to_be_checked()  # and so it was saved


async def test_the_endless_switch_clicked_on_and_off_stays_off(server, page):
    await page.goto(server.session_url)
    held = _Held(page)
    await page.route("**/endless/**", held.handle)
    switch = page.get_by_role("checkbox", name="Endless")
    await _click_twice_with_the_first_held(page, switch, held)
    await asyncio.wait_for(held.again.wait(), 30)  # the second click's request left
    await expect(switch).not_to_be_checked()
    await expect(page.get_by_role("combobox", name="Context template")).to_be_disabled()
    await page.unroute("**/endless/**")
    await page.reload()
    await expect(switch).not_to_be_checked()


async def test_another_tabs_switch_frame_does_not_lose_this_tabs_queued_click(server, page):
    """This tab clicks Auto-apply on and off (the off waits behind the on, held at the
    network); another tab turns it on meanwhile, and its frame reaches this tab first. The
    last click made, this tab's off, is what stays, on both tabs and in the store."""
    await page.goto(server.session_url)
    other = await page.context.new_page()
    await other.goto(server.session_url)
    await _count_frames(page, 'id="auto-apply-form"')
    held = _Held(page)
    await page.route("**/auto-apply/", held.handle)
    switch = page.get_by_role("checkbox", name="Auto-apply edits")
    await switch.click()
    await asyncio.wait_for(held.arrived.wait(), 30)
    await switch.click()  # queued behind the first
    await expect(switch).not_to_be_checked()

    theirs = other.get_by_role("checkbox", name="Auto-apply edits")
    await theirs.click()  # on, saved, and its frame goes to every tab
    await page.wait_for_function("() => window.__frames > 0")  # this tab has it
    await held.release()
    await asyncio.wait_for(held.again.wait(), 30)  # the queued click's request left
    await expect(switch).not_to_be_checked()
    await expect(theirs).not_to_be_checked()  # its frame reached the other tab
    await other.close()
    await page.unroute("**/auto-apply/")
    await page.reload()
    await expect(switch).not_to_be_checked()
