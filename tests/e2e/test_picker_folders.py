"""A large repository's Files panel opens at its top level; opening a folder brings its rows
from the server, with their state, and ticking in them works as anywhere else."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_opening_a_folder_of_a_large_repository_brings_its_rows_with_their_state(
    server, page
):
    for n in range(320):  # over the size at which every folder starts open
        path = server.repo / "many" / f"part{n // 40}" / f"mod_{n}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"def f{n}():\n    return {n}\n")
    await page.goto(server.session_url)
    files = page.get_by_role("region", name="Files")
    total = files.locator("#picker-total")
    await expect(total).to_contain_text("0 selected")
    many = files.locator('[data-folder-row="many"]')
    await expect(many).to_have_attribute("aria-expanded", "false")
    await expect(files.get_by_role("checkbox", name="folder many/part1")).to_have_count(0)

    # Its rows come from the server, drawn there (chat.web.panels.tree).
    async with page.expect_response(re.compile(r"/files/rows/\?folder=many$")) as answer:
        await files.get_by_role("button", name="Expand many", exact=True).click()
    assert 'data-folder-row="many/part1"' in await (await answer.value).text()
    await expect(many).to_have_attribute("aria-expanded", "true")
    await files.get_by_role("button", name="Expand many/part1").click()
    box = files.get_by_role("checkbox", name="many/part1/mod_41.py")
    await expect(box).to_be_visible()
    await expect(files.locator('[data-row="many/part1/mod_41.py"] .tokens')).to_have_text(
        re.compile(r"^\d+$"), timeout=SLOW
    )
    await box.check()
    await expect(total).to_contain_text("1 selected")
    part = files.get_by_role("checkbox", name="folder many/part1")
    assert await part.evaluate("box => box.indeterminate")
    assert await files.get_by_role("checkbox", name="folder many", exact=True).evaluate(
        "box => box.indeterminate"
    )

    # A closed folder ticked whole: its files are selected though none is on the page.
    await files.get_by_role("checkbox", name="folder many/part2").check()
    await expect(total).to_contain_text("41 selected")
    await files.get_by_role("button", name="Expand many/part2").click()
    await expect(files.get_by_role("checkbox", name="many/part2/mod_80.py")).to_be_checked()
    await screenshot(page, "picker-folder-open")

    # A reload opens the folders that hold the selection, drawn checked by the server.
    await page.reload()
    await expect(files.get_by_role("checkbox", name="many/part1/mod_41.py")).to_be_checked()
    await expect(files.get_by_role("checkbox", name="folder many/part2")).to_be_checked()
    await expect(files.get_by_role("checkbox", name="folder many/part3")).not_to_be_checked()
    mixed = files.get_by_role("checkbox", name="folder many", exact=True)
    assert await mixed.evaluate("box => box.indeterminate && !box.checked")  # drawn "some"

    # The filter brings the best rows only, and says how many more matched.
    await files.get_by_placeholder(re.compile("Filter files")).fill("mod_")
    await expect(files.locator(".found-more")).to_have_text(
        "The best 200 of 320 matches: type more to narrow them."
    )
    await expect(files.locator("[data-row]")).to_have_count(200)
    await files.get_by_placeholder(re.compile("Filter files")).fill("mod_31")
    await expect(files.locator(".found-more")).to_have_count(0)
