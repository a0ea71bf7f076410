"""The Files panel's third state: a file (or a folder's files) sent as its outline, with the
token count of each state shown, and what has no outline saying so."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot

pytestmark = pytest.mark.asyncio(loop_scope="session")

SHOP = "".join(
    f"def step_{n}(cart: list, qty: int = {n}) -> int:\n"
    f"    total = sum(item * qty for item in cart)\n"
    f"    return total + {n} * len(cart)\n\n"
    for n in range(12)
)


def number(text: str) -> int:
    return int(text.replace(",", ""))


async def counts(row) -> tuple[int, int]:
    """(outline, full) as the row shows them."""
    outline = await row.get_by_title("Tokens as an outline").text_content()
    full = await row.get_by_title("Tokens of the whole file").text_content()
    return number(outline), number(full)


def selected_tokens(text: str) -> int:
    match = re.search(r"([\d,]+) of [\d,]+ tokens", text)
    assert match, text
    return number(match.group(1))


async def test_files_and_folders_go_as_outlines_with_both_counts(server, page):
    (server.repo / "src" / "shop.py").write_text(SHOP)
    await page.goto(server.session_url)
    files = page.get_by_role("region", name="Files")
    total = files.locator("#picker-total")
    row = files.get_by_role("treeitem").filter(has_text="shop.py")
    # Both counts arrive from the background: the whole file and its outline.
    await expect(row.get_by_title("Tokens as an outline")).to_have_text(
        re.compile(r"^[\d,]+$"), timeout=SLOW
    )
    await expect(row.get_by_title("Tokens of the whole file")).to_have_text(re.compile(r"^[\d,]+$"))
    outline, full = await counts(row)
    assert 0 < outline < full

    # A file acdc has no grammar for has no outline state, and says so on hover.
    readme = files.get_by_role("button", name="Outline README.md")
    await expect(readme).to_have_attribute("aria-disabled", "true")
    await expect(readme).to_have_attribute("title", re.compile("no grammar"))
    await expect(readme).to_be_disabled()
    await readme.click(force=True)  # nothing happens
    await expect(files.get_by_role("checkbox", name="README.md")).not_to_be_checked()

    # Outline on: selected, counted at the outline's size.
    button = files.get_by_role("button", name="Outline src/shop.py")
    await button.click()
    await expect(button).to_have_attribute("aria-pressed", "true")
    await expect(files.get_by_role("checkbox", name="src/shop.py")).to_be_checked()
    await expect(total).to_contain_text("1 selected (1 as outline)")
    assert selected_tokens(await total.text_content()) == outline
    await expect(page.get_by_role("region", name="Context")).to_contain_text("Active files")
    await screenshot(page, "picker-outline")

    # The folder's outline: each of its files as an outline, the folder's sum shown.
    folder = files.get_by_role("button", name="Outline folder src")
    await folder.click()
    await expect(folder).to_have_attribute("aria-pressed", "true")
    await expect(total).to_contain_text("2 selected (2 as outline)")
    app = files.get_by_role("treeitem").filter(has_text="app.py")
    app_outline, _ = await counts(app)
    folder_row = files.locator('[data-folder-row="src"]')
    await expect(folder_row.get_by_title("Tokens as an outline")).to_have_text(
        f"{outline + app_outline:,}"
    )
    assert selected_tokens(await total.text_content()) == outline + app_outline

    # The state survives a reload (the server keeps it), then the checkbox makes it full.
    await page.reload()
    await expect(files.get_by_role("button", name="Outline src/shop.py")).to_have_attribute(
        "aria-pressed", "true"
    )
    await expect(total).to_contain_text("2 selected (2 as outline)")
    box = files.get_by_role("checkbox", name="src/shop.py")
    await box.uncheck()
    await expect(total).to_contain_text("1 selected (1 as outline)")
    await box.check()
    await expect(total).to_contain_text("2 selected (1 as outline)")
    await expect(files.get_by_role("button", name="Outline src/shop.py")).to_have_attribute(
        "aria-pressed", "false"
    )
    await expect(total).to_contain_text(f"{full + app_outline:,} of")
