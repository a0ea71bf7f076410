"""A selection over the budget: the boxes stay as ticked, the total turns red and names the
files that sending would shed, and sending sheds them with the chat's notice. The picker
and the HUD show one budget figure."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot

pytestmark = pytest.mark.asyncio(loop_scope="session")

# About 90k, 70k and 50k tokens: together past the budget (the offline models' window is
# 200,000), and the largest gone, they fit.
SIZES = {"docs/big.txt": 90_000, "docs/mid.txt": 70_000, "docs/small.txt": 50_000}


def _budget(text: str) -> str:
    found = re.search(r"of ([\d,]+) tokens", text)
    assert found, text
    return found.group(1)


async def test_over_budget_the_ticks_stay_and_the_files_to_shed_are_named(server, page):
    (server.repo / "docs").mkdir()
    for name, words in SIZES.items():
        (server.repo / name).write_text("word " * words)
    server.script_replies("Looked at the docs.")
    await page.goto(server.session_url)
    files = page.get_by_role("region", name="Files")
    hud = page.get_by_role("region", name="Context")
    total = files.locator("#picker-total")
    for name in SIZES:  # their token counts have arrived
        row = files.get_by_role("treeitem").filter(has_text=name.split("/")[1])
        await expect(row).to_contain_text(re.compile(r"\d\d,\d{3}"), timeout=SLOW)

    # Ticked one after the other, without waiting for the server's answers.
    for name in SIZES:
        await files.get_by_role("checkbox", name=name).check()
    shed = files.get_by_role("status").filter(has_text="Over budget")
    await expect(shed).to_contain_text("would shed 1 file", timeout=SLOW)
    await expect(shed).to_contain_text("docs/big.txt")
    await expect(hud.get_by_role("status").filter(has_text="Over budget")).to_contain_text(
        "docs/big.txt"
    )
    await expect(total).to_have_class(re.compile(r"\bover\b"))
    await expect(total).to_contain_text("3 selected")
    for name in SIZES:
        await expect(files.get_by_role("checkbox", name=name)).to_be_checked()
    # One budget: the same figure in the picker and in the HUD.
    picker_budget = _budget(await total.text_content())
    assert picker_budget == _budget(await hud.locator(".hud-total").text_content())
    assert picker_budget != "200,000"  # the window less the reply's reserve and the tools
    for width in (1400, 800):
        await page.set_viewport_size({"width": width, "height": 860})
        await screenshot(page, f"picker-over-budget-{width}")
    await page.set_viewport_size({"width": 1280, "height": 860})

    # A reload shows the same: nothing was unticked behind the person's back.
    await page.reload()
    for name in SIZES:
        await expect(files.get_by_role("checkbox", name=name)).to_be_checked()
    await expect(files.get_by_role("status").filter(has_text="Over budget")).to_contain_text(
        "docs/big.txt"
    )

    # Sending sheds it, with the notice, and the picker follows.
    await expect(page.get_by_role("button", name="Send", exact=True)).to_be_enabled(timeout=SLOW)
    await page.get_by_role("textbox", name="Message").fill("What do the docs say?")
    await page.get_by_role("button", name="Send", exact=True).click()
    log = page.get_by_role("log", name="Conversation")
    await expect(log.get_by_role("alert")).to_contain_text("docs/big.txt", timeout=SLOW)
    await expect(log).to_contain_text("Looked at the docs.", timeout=SLOW)
    await expect(files.get_by_role("checkbox", name="docs/big.txt")).not_to_be_checked()
    await expect(files.get_by_role("checkbox", name="docs/mid.txt")).to_be_checked()
    await expect(total).not_to_have_class(re.compile(r"\bover\b"))
    await expect(files.get_by_role("status").filter(has_text="Over budget")).to_be_hidden()
