"""The Files panel as a person uses it, and as the model changes it."""

from __future__ import annotations

import asyncio
import re

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot

pytestmark = pytest.mark.asyncio(loop_scope="session")


def tokens_in(text: str) -> int:
    match = re.search(r"([\d,]+) of [\d,]+ tokens", text)
    assert match, text
    return int(match.group(1).replace(",", ""))


async def test_folders_totals_filter_pins_and_persistence(server, page):
    (server.repo / "src" / "util.py").write_text("def helper():\n    return 42\n" * 20)
    trees, sets_news = [], asyncio.Queue()
    page.on(
        "request", lambda r: "/files/rows/" in r.url and "total=1" not in r.url and trees.append(r)
    )
    page.on(
        "websocket",
        lambda ws: ws.on("framereceived", lambda f: "data-sets=" in f and sets_news.put_nowait(f)),
    )
    await page.goto(server.session_url)
    files = page.get_by_role("region", name="Files")
    total = files.locator("#picker-total")
    await expect(total).to_contain_text("0 selected")
    await expect(files.get_by_role("treeitem").filter(has_text="app.py")).to_contain_text(
        re.compile(r"\d"), timeout=SLOW
    )  # its token count has arrived (counted in the background)

    # Pin a file: the follower's news of the new sets then finds this tab drawn from them
    # and draws no tree again (a tick's answer would mark the HUD drawn, so pin first).
    drawn, stale = len(trees), sets_news.qsize()
    await files.get_by_role("button", name="Pin README.md").click()
    await expect(files.get_by_role("button", name="Unpin README.md")).to_be_visible()
    while stale:
        await sets_news.get()  # news from before the pin
        stale -= 1
    await asyncio.wait_for(sets_news.get(), SLOW / 1000)
    await expect(total).to_contain_text("0 selected")  # the page has taken the news by now
    assert len(trees) == drawn, [r.url for r in trees[drawn:]]

    # One file of the folder: the folder shows indeterminate, the total counts it.
    await files.get_by_role("checkbox", name="src/app.py").check()
    folder = files.get_by_role("checkbox", name="folder src")
    await expect(total).to_contain_text("1 selected")
    assert await folder.evaluate("box => box.indeterminate")
    one = tokens_in(await total.text_content())

    # The whole folder: both files, a bigger total.
    await folder.check()
    await expect(total).to_contain_text("2 selected")
    assert tokens_in(await total.text_content()) > one
    assert not await folder.evaluate("box => box.indeterminate")
    await expect(files.get_by_role("checkbox", name="src/util.py")).to_be_checked()
    await expect(page.get_by_role("region", name="Context")).to_contain_text("Active files")

    # Filter by a fuzzy subsequence; Escape clears it.
    filter_box = files.get_by_role("searchbox", name="Filter files")
    await filter_box.fill("utl")
    await expect(files.get_by_role("checkbox", name="src/util.py")).to_be_visible()
    await expect(files.get_by_role("checkbox", name="README.md")).to_have_count(0)
    await screenshot(page, "picker-filtered")
    await filter_box.press("Escape")
    await expect(files.get_by_role("checkbox", name="README.md")).to_be_visible()

    # Reload: selection and pins are still there.
    await screenshot(page, "picker-selected")
    await page.reload()
    await expect(files.get_by_role("checkbox", name="src/util.py")).to_be_checked()
    await expect(files.get_by_role("checkbox", name="src/app.py")).to_be_checked()
    await expect(files.get_by_role("checkbox", name="README.md")).not_to_be_checked()
    await expect(files.get_by_role("button", name="Unpin README.md")).to_be_attached()


async def test_an_edit_on_disk_is_marked_and_the_model_can_activate_files(server, page):
    await page.goto(server.session_url)
    files = page.get_by_role("region", name="Files")
    await files.get_by_role("checkbox", name="src/app.py").check()
    await expect(files.locator("#picker-total")).to_contain_text("1 selected")
    # The server's answer to the selection: the page's websocket is connected, and the
    # server handled a message after the connect that started the file watcher.
    await expect(page.get_by_role("region", name="Context")).to_contain_text("Active files")

    # The open tree is never asked for again: the news brings the rows it changes.
    redrawn = []
    page.on("request", lambda r: redrawn.append(r.url) if "opened=1" in r.url else None)
    (server.repo / "src" / "app.py").write_text("def greet(name):\n    return f'hi {name}'\n")
    row = files.locator('[data-row="src/app.py"]')
    await expect(row.get_by_text("edited")).to_be_visible(timeout=SLOW)
    (server.repo / "src" / "fresh.py").write_text("NEW = True\n")  # appears without a reload
    await expect(files.get_by_role("checkbox", name="src/fresh.py")).to_be_visible(timeout=SLOW)
    fresh_row = files.locator('[data-row="src/fresh.py"]')
    # Its count arrives at once (a .py row also shows its outline's count, in its ≡ button).
    whole = fresh_row.get_by_title("Tokens of the whole file")
    await expect(whole).to_have_text(re.compile(r"^\d+$"))
    names = files.locator('[data-folder-row="src"] + [role="group"] > [data-row]')
    listed = await names.evaluate_all("rows => rows.map(r => r.dataset.row)")
    assert "src/fresh.py" in listed and listed == sorted(listed)  # in its folder, in order
    (server.repo / "src" / "fresh.py").unlink()
    await expect(fresh_row).to_have_count(0, timeout=SLOW)

    server.script_replies(
        {"tool_calls": [{"name": "activate", "arguments": {"id": "README.md"}, "id": "t1"}]},
        "I activated the readme.",
    )
    await page.get_by_role("textbox", name="Message").fill("Look at the readme, please")
    await page.get_by_role("button", name="Send").click()
    log = page.get_by_role("log", name="Conversation")
    await expect(log).to_contain_text("I activated the readme.", timeout=SLOW)
    await expect(files.get_by_role("checkbox", name="README.md")).to_be_checked()
    await expect(files.locator('[data-row="README.md"]')).to_have_class(re.compile(r"\bflash\b"))
    await expect(files.locator("#picker-total")).to_contain_text("2 selected")
    assert redrawn == []
    card = log.locator(".tool-card").first
    await expect(card).to_contain_text("activate")
    await card.locator("summary").click()
    await expect(card).to_contain_text("README.md")
    await screenshot(page, "picker-model-activated")


async def test_rows_drawn_again_keep_a_choice_made_while_they_were_on_their_way(server, page):
    await page.goto(server.session_url)
    files = page.get_by_role("region", name="Files")
    total = files.locator("#picker-total")
    readme = files.get_by_role("checkbox", name="README.md")
    await expect(readme).to_be_visible()
    drawn, answered = asyncio.Event(), asyncio.Event()

    async def late(route) -> None:  # drawn before the tick, arriving after its answer
        response = await route.fetch()
        drawn.set()
        await answered.wait()
        await route.fulfill(response=response)

    await page.route(re.compile(r"/files/rows/$"), late)  # the filter's list (a POST)
    await files.get_by_placeholder(re.compile("Filter files")).fill("READ")
    await asyncio.wait_for(drawn.wait(), SLOW / 1000)
    await readme.check()  # in the tree still shown
    await expect(total).to_contain_text("1 selected")
    answered.set()

    await expect(files.locator("[data-row]")).to_have_count(1)  # the filter's list is in
    await expect(readme).to_be_checked()
