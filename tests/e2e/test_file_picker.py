"""The Files panel as a person uses it, and as the model changes it."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot

pytestmark = pytest.mark.asyncio(loop_scope="session")
TREE = 'id="file-tree-root"'  # a frame drawing the tab's rows again


def tokens_in(text: str) -> int:
    match = re.search(r"([\d,]+) of [\d,]+ tokens", text)
    assert match, text
    return int(match.group(1).replace(",", ""))


async def test_folders_totals_filter_pins_and_persistence(server, page):
    (server.repo / "src" / "util.py").write_text("def helper():\n    return 42\n" * 20)
    trees, asked, sets_news = [], [], asyncio.Queue()

    def watch(ws) -> None:
        ws.on("framereceived", lambda f: TREE in f and trees.append(f))
        ws.on("framereceived", lambda f: "data-sets=" in f and sets_news.put_nowait(f))
        ws.on("framesent", lambda f: '"rows"' in f and asked.append(f))

    page.on("websocket", watch)
    await page.goto(server.session_url)
    files = page.get_by_role("region", name="Files")
    total = files.locator("#picker-total")
    await expect(total).to_contain_text("0 selected")
    await expect(files.get_by_role("treeitem").filter(has_text="app.py")).to_contain_text(
        re.compile(r"\d"), timeout=SLOW
    )  # its token count has arrived (counted in the background)

    # Pin a file: the follower's news of the new sets makes the tab ask for its rows, naming
    # the sets it shows, and the server, holding those, refuses to draw them again (a tick's
    # answer would mark the HUD drawn, so pin first).
    drawn, stale, before = len(trees), sets_news.qsize(), len(asked)
    await files.get_by_role("button", name="Pin README.md").click()
    await expect(files.get_by_role("button", name="Unpin README.md")).to_be_visible()
    while stale:
        await sets_news.get()  # news from before the pin
        stale -= 1
    await asyncio.wait_for(sets_news.get(), SLOW / 1000)
    await expect(total).to_contain_text("0 selected")  # the page has taken the news by now
    assert any(json.loads(f)["shown"] for f in asked[before:]), asked[before:]

    # One file of the folder: the folder shows indeterminate, the total counts it.
    await files.get_by_role("checkbox", name="src/app.py").check()
    folder = files.get_by_role("checkbox", name="folder src")
    await expect(total).to_contain_text("1 selected")
    # Its answer comes after anything the server sent for the ask before it: no rows.
    assert len(trees) == drawn, trees[drawn:]
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
    # The open tree is never drawn again: the news brings the rows it changes.
    redrawn = []
    page.on(
        "websocket", lambda ws: ws.on("framereceived", lambda f: TREE in f and redrawn.append(f))
    )
    await page.goto(server.session_url)
    files = page.get_by_role("region", name="Files")
    await files.get_by_role("checkbox", name="src/app.py").check()
    await expect(files.locator("#picker-total")).to_contain_text("1 selected")
    # The server's answer to the selection: the page's websocket is connected, and the
    # server handled a message after the connect that started the file watcher.
    await expect(page.get_by_role("region", name="Context")).to_contain_text("Active files")

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


async def test_rows_asked_for_before_a_choice_but_taken_after_it_show_the_choice(server, page):
    """The filter's ask is held at the socket until a tick has gone past it: the server
    draws the list after saving the tick, so the list shows it ticked."""
    loop = asyncio.get_running_loop()
    ask_held = loop.create_future()

    async def socket(route) -> None:
        to_server = route.connect_to_server()

        def from_page(message) -> None:
            if json.loads(message).get("view") == "list" and not ask_held.done():
                ask_held.set_result(message)
            else:
                to_server.send(message)
                if '"select"' in str(message) and ask_held.done():
                    to_server.send(ask_held.result())  # the ask after the tick

        route.on_message(from_page)
        to_server.on_message(route.send)

    await page.route_web_socket(re.compile(r"/ws/"), socket)
    await page.goto(server.session_url)
    files = page.get_by_role("region", name="Files")
    total = files.locator("#picker-total")
    readme = files.get_by_role("checkbox", name="README.md")
    await expect(page.get_by_role("button", name="Send")).to_be_enabled()  # the socket is open
    await files.get_by_placeholder(re.compile("Filter files")).fill("READ")
    await ask_held
    await readme.check()  # in the tree still shown
    await expect(total).to_contain_text("1 selected")

    await expect(files.locator("[data-row]")).to_have_count(1)  # the filter's list is in
    await expect(readme).to_be_checked()
    await expect(total).to_contain_text("1 selected")
