"""The Files panel takes the server's updates cell by cell: a folder just ticked keeps its
tick, the folder above it stays mixed, the keyboard focus stays where it was, and the rows
on the page are the same elements before and after (nothing was drawn again)."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from chat.web.panels.fileupdates import row_key
from tests.e2e.conftest import SLOW, screenshot

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_an_update_after_ticking_a_folder_keeps_the_ticks_the_mixed_state_and_focus(
    server, page
):
    (server.repo / "lib" / "deep").mkdir(parents=True)
    (server.repo / "lib" / "a.py").write_text("def a():\n    return 1\n" * 10)
    (server.repo / "lib" / "deep" / "c.py").write_text("class C:\n    pass\n" * 5)
    await page.goto(server.session_url)
    files = page.get_by_role("region", name="Files")
    row = files.locator('[data-row="lib/deep/c.py"]')
    whole = row.get_by_title("Tokens of the whole file")
    await expect(whole).to_have_text(re.compile(r"^[\d,]+$"), timeout=SLOW)
    before = await whole.text_content()
    assert await whole.get_attribute("id") == "t" + row_key("lib/deep/c.py")  # picker.js's key

    deep = files.get_by_role("checkbox", name="folder lib/deep")
    await deep.check()
    await deep.focus()
    await expect(files.locator("#picker-total")).to_contain_text("1 selected")
    await expect(page.get_by_role("region", name="Context")).to_contain_text("Active files")
    lib = files.get_by_role("checkbox", name="folder lib", exact=True)
    assert await lib.evaluate("box => box.indeterminate")
    # Every row on the page gets a mark an element drawn again would not have.
    await files.locator("[data-row], [data-folder-row]").evaluate_all(
        "rows => rows.forEach((row) => { row.dataset.seen = 'yes'; })"
    )

    # The watcher's news about the ticked file: marked edited, counted again.
    (server.repo / "lib" / "deep" / "c.py").write_text("class C:\n    x = 1\n" * 40)
    await expect(row.get_by_text("edited")).to_be_visible(timeout=SLOW)
    await expect(whole).not_to_have_text(before)
    folder_total = files.locator('[data-folder-row="lib/deep"] .tokens')
    await expect(folder_total).to_have_text(await whole.text_content())
    # The running total counts the selected file again too (its session's tabs are told).
    await expect(files.locator("#picker-total")).to_contain_text(
        f"· {await whole.text_content()} of"
    )

    await expect(deep).to_be_checked()
    await expect(files.get_by_role("checkbox", name="lib/deep/c.py")).to_be_checked()
    assert await lib.evaluate("box => box.indeterminate && !box.checked")
    assert await deep.evaluate("box => box === document.activeElement")
    redrawn = await files.locator("[data-row], [data-folder-row]").evaluate_all(
        "rows => rows.filter((row) => row.dataset.seen !== 'yes').length"
    )
    assert redrawn == 0
    await screenshot(page, "picker-after-update")


async def test_a_binary_file_counted_in_the_background_or_made_later_cannot_be_ticked(server, page):
    (server.repo / "assets").mkdir()
    (server.repo / "assets" / "logo.bin").write_bytes(b"\x89PNG\x00\x01\x02" * 50)
    (server.repo / "assets" / "Ünï côde.bin").write_bytes(b"\x00\x01" * 50)
    await page.goto(server.session_url)
    files = page.get_by_role("region", name="Files")
    await expect(files.get_by_role("checkbox", name="assets/logo.bin")).to_be_disabled(timeout=SLOW)
    await expect(files.locator('[data-row="assets/logo.bin"] .tokens')).to_have_text("binary")
    # picker.js keys a row as the server does, UTF-8 and all (the cells' ids).
    cell = files.locator('[data-row="assets/Ünï côde.bin"] .tokens')
    await expect(cell).to_have_text("binary")
    assert await cell.get_attribute("id") == "t" + row_key("assets/Ünï côde.bin")

    (server.repo / "assets" / "later.bin").write_bytes(b"\x00\xff" * 100)  # the watcher's news
    await expect(files.get_by_role("checkbox", name="assets/later.bin")).to_be_disabled(
        timeout=SLOW
    )
    await expect(files.locator('[data-row="assets/later.bin"] .tokens')).to_have_text("binary")
    await expect(files.get_by_role("checkbox", name="folder assets")).not_to_be_checked()

    (server.repo / "assets" / "later.bin").unlink()  # gone from disk: gone from the tree
    await expect(files.get_by_role("checkbox", name="assets/later.bin")).to_have_count(
        0, timeout=SLOW
    )
    await expect(files.get_by_role("checkbox", name="assets/logo.bin")).to_be_visible()
