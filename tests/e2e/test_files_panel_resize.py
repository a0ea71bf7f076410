"""The Files panel is as wide as the person makes it: drag its edge or use the keyboard,
and the width is still there after a reload."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import screenshot

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def _width(locator) -> float:
    box = await locator.bounding_box()
    assert box is not None
    return box["width"]


async def test_dragging_the_edge_resizes_the_files_panel_and_it_is_remembered(server, page):
    await page.goto(server.session_url)
    files = page.get_by_role("region", name="Files")
    edge = page.get_by_role("separator", name="Resize the Files panel")
    conversation = page.get_by_role("log", name="Conversation")
    await expect(edge).to_be_visible()
    before, chat_before = await _width(files), await _width(conversation)

    box = await edge.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    await page.mouse.move(x, y)
    await page.mouse.down()
    await page.mouse.move(x + 100, y, steps=5)
    await page.mouse.up()
    assert await _width(files) == pytest.approx(before + 100, abs=4)
    assert await _width(conversation) == pytest.approx(chat_before - 100, abs=4)
    await expect(edge).to_have_attribute("aria-valuenow", str(round(before + 100)))
    await screenshot(page, "files-panel-wide")

    # The keyboard: the edge takes the focus, the arrows move it, Home is the narrowest.
    await edge.focus()
    await page.keyboard.press("ArrowLeft")
    assert await _width(files) == pytest.approx(before + 100 - 16, abs=4)
    remembered = await _width(files)

    await page.reload()
    await expect(page.get_by_role("separator", name="Resize the Files panel")).to_be_visible()
    assert await _width(files) == pytest.approx(remembered, abs=1)
    await edge.focus()
    await page.keyboard.press("Home")
    assert await _width(files) == pytest.approx(180, abs=1)
    # The file names still show whole at the narrowest width.
    name = files.locator('[data-row="src/app.py"] .name')
    assert await name.evaluate("el => el.scrollWidth <= el.clientWidth")
