"""@-mentions in the message box: the completion list, choosing by keyboard and mouse, the
chip in the composer and in the sent message (after a reload too), and what choosing does
to the Files panel."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, FirstGetHeld, screenshot

pytestmark = pytest.mark.asyncio(loop_scope="session")

UTILS = "def slugify(text):\n    return text.lower().replace(' ', '-')\n\n\nclass Util:\n    pass\n"


async def _open(server, page):
    (server.repo / "src" / "utils.py").write_text(UTILS)
    await page.goto(server.session_url)
    files = page.get_by_role("region", name="Files")
    await expect(files.get_by_role("checkbox", name="src/utils.py")).to_be_visible()
    await expect(page.get_by_role("button", name="Send", exact=True)).to_be_enabled(timeout=SLOW)
    return files


async def _looks(page, name: str) -> None:
    """Screenshots in light and dark, wide and narrow, for a person to look at."""
    for width, scheme in ((1400, "light"), (800, "dark"), (1400, "dark"), (800, "light")):
        await page.set_viewport_size({"width": width, "height": 860})
        await page.emulate_media(color_scheme=scheme)
        await screenshot(page, f"{name}-{width}-{scheme}")
    await page.set_viewport_size({"width": 1280, "height": 860})
    await page.emulate_media(color_scheme="light")


async def test_a_file_is_mentioned_by_keyboard_sent_with_its_chip_and_kept(server, page):
    files = await _open(server, page)
    server.script_replies("It slugifies.")
    box = page.get_by_role("textbox", name="Message")
    await box.press_sequentially("What does @uti")
    mentions = page.get_by_role("listbox", name="Files and symbols to mention")
    first = mentions.get_by_role("option", name="src/utils.py", exact=True)
    await expect(first).to_have_attribute("aria-selected", "true")
    await expect(box).to_have_attribute("aria-activedescendant", await first.get_attribute("id"))
    await _looks(page, "mentions-list")
    await box.press("ArrowDown")  # and back: the keys move through the list
    await expect(first).to_have_attribute("aria-selected", "false")
    await box.press("ArrowUp")
    await expect(first).to_have_attribute("aria-selected", "true")
    await box.press("Enter")  # chooses; it does not send

    await expect(mentions).to_be_hidden()
    await expect(box).to_have_value("What does @src/utils.py ")
    tray = page.get_by_role("list", name="Mentions to send")
    await expect(tray.get_by_role("listitem")).to_have_text(re.compile(r"@src/utils\.py"))
    await expect(files.get_by_role("checkbox", name="src/utils.py")).to_be_checked()
    context = page.get_by_role("region", name="Context")
    await expect(context).to_contain_text(re.compile(r"Active files.* 1 file\b", re.S))

    await box.press_sequentially("do?")
    await box.press("Enter")
    log = page.get_by_role("log", name="Conversation")
    await expect(log).to_contain_text("It slugifies.", timeout=SLOW)
    sent = log.get_by_role("article", name="Your message").last
    await expect(sent.get_by_role("list", name="Mentioned")).to_contain_text("@src/utils.py")
    await expect(tray.get_by_role("listitem")).to_have_count(0)
    await _looks(page, "mentions-sent")

    await page.reload()
    sent = page.get_by_role("log", name="Conversation").get_by_role("article", name="Your message")
    await expect(sent.last.get_by_role("list", name="Mentioned")).to_contain_text("@src/utils.py")
    await expect(files.get_by_role("checkbox", name="src/utils.py")).to_be_checked()

    session_id = server.session_url.rstrip("/").rsplit("/", 1)[-1]
    await page.goto(f"{server.url}history/{session_id}/")
    kept = page.get_by_role("article", name="Your message").get_by_role("list", name="Mentioned")
    await expect(kept).to_contain_text("@src/utils.py")
    await screenshot(page, "mentions-history")


async def test_an_at_typed_before_the_list_of_paths_came_offers_the_files_when_it_comes(
    server, page
):
    (server.repo / "src" / "utils.py").write_text(UTILS)
    held = FirstGetHeld()
    await page.route("**/files.json", held.handle)
    await page.goto(server.session_url)
    await held.arrived.wait()
    box = page.get_by_role("textbox", name="Message")
    await box.press_sequentially("What does @utils")
    mentions = page.get_by_role("listbox", name="Files and symbols to mention")
    file = mentions.get_by_role("option", name="src/utils.py", exact=True)
    await expect(file).to_have_count(0)  # no paths yet
    held.release()
    await expect(file).to_be_visible()
    await page.unroute("**/files.json")


async def test_a_symbol_mention_sends_its_file_as_outline_until_its_chip_is_removed(server, page):
    files = await _open(server, page)
    box = page.get_by_role("textbox", name="Message")
    await box.press_sequentially("Rename @slugi")
    mentions = page.get_by_role("listbox", name="Files and symbols to mention")
    symbol = mentions.get_by_role("option", name="slugify (function in src/utils.py, line 1)")
    await expect(symbol).to_be_visible(timeout=SLOW)  # the map may still be warming
    await symbol.click()

    await expect(box).to_have_value("Rename @slugify ")
    await expect(box).to_be_focused()
    outline = files.get_by_role("button", name="Outline src/utils.py")
    await expect(outline).to_have_attribute("aria-pressed", "true")
    remove = page.get_by_role("button", name="Remove mention symbol slugify in src/utils.py")
    await _looks(page, "mentions-symbol-chip")
    await remove.click()
    await expect(outline).to_have_attribute("aria-pressed", "false")
    await expect(files.get_by_role("checkbox", name="src/utils.py")).not_to_be_checked()

    await box.press_sequentially(" and @src/ap")  # "/" types in the box, as ever
    await expect(mentions.get_by_role("option", name="src/app.py")).to_be_visible()
    await expect(box).to_be_focused()
    await box.press("Escape")  # closes the list, keeps the text
    await expect(mentions).to_be_hidden()
    await expect(box).to_have_value("Rename @slugify  and @src/ap")
    await page.keyboard.press("Control+k")  # still jumps to the file filter
    await expect(page.get_by_role("searchbox", name="Filter files")).to_be_focused()


async def test_an_odd_path_is_mentioned_and_sent(server, page):
    odd = "docs/notes: café.md"
    (server.repo / "docs").mkdir()
    (server.repo / odd).write_text("# Notes\n")
    await _open(server, page)
    server.script_replies("Read it.")
    box = page.get_by_role("textbox", name="Message")
    await box.press_sequentially("See @caf")
    await page.get_by_role("option", name=odd).click()
    await box.press("Enter")
    log = page.get_by_role("log", name="Conversation")
    await expect(log).to_contain_text("Read it.", timeout=SLOW)
    sent = log.get_by_role("article", name="Your message").last
    await expect(sent.get_by_role("list", name="Mentioned")).to_contain_text(odd)


async def test_the_completion_ranks_as_the_files_filter_and_skips_what_it_may_not_offer(
    server, page
):
    await _open(server, page)
    found = await page.evaluate(
        """() => {
        const files = ["src/utils.py", "lib/mutation.py", "utilities/x.md", ".env", "README.md"];
        for (let n = 0; n < 10000; n++) files.push(`pkg${n % 50}/mod${n}/file${n}.py`);
        const defs = window.acdcMention.indexSymbols([
          ["util", "function", "src/utils.py", 4], ["envelope", "function", ".env", 1],
        ]);
        const offered = (p) => p !== ".env";
        const got = window.acdcMention.complete("uti", files, defs, offered);
        return {
          got, filter: window.acdcFilter.rankFiles(files, "uti").slice(0, 3),
          env: window.acdcMention.complete("env", files, defs, offered),
          all: window.acdcMention.complete("py", files, defs, offered).length,
        };
    }"""
    )
    paths = [o["path"] for o in found["got"] if o["kind"] == "file"]
    assert paths[:3] == found["filter"]  # the Files panel's own order
    assert {
        "kind": "symbol",
        "name": "util",
        "symbolKind": "function",
        "path": "src/utils.py",
        "line": 4,
    } in found["got"]
    assert found["env"] == []  # a secret-shaped file is not offered, nor its symbols
    assert found["all"] == 8  # at most eight files


async def test_a_mention_the_server_refuses_comes_back_with_its_message(server, page):
    await _open(server, page)
    box = page.get_by_role("textbox", name="Message")
    await box.press_sequentially("Explain @utils")
    await box.press("Tab")  # Tab chooses too
    tray = page.get_by_role("list", name="Mentions to send")
    await expect(tray.get_by_role("listitem")).to_have_count(1)
    (server.repo / "src" / "utils.py").unlink()  # gone before the message is sent
    await box.press("Enter")
    log = page.get_by_role("log", name="Conversation")
    refusal = log.get_by_role("alert").filter(has_text="@src/utils.py")
    await expect(refusal).to_contain_text("names no file of the repository")
    await expect(box).to_have_value(re.compile(r"^Explain @src/utils\.py\s*$"))
    await expect(tray.get_by_role("listitem")).to_have_count(1)


async def test_shift_enter_sends_a_symbols_body_as_a_tool_output(server, page):
    files = await _open(server, page)
    server.script_replies("It lowers and dashes.")
    box = page.get_by_role("textbox", name="Message")
    await box.press_sequentially("Explain @slugi")
    mentions = page.get_by_role("listbox", name="Files and symbols to mention")
    symbol = mentions.get_by_role("option", name="slugify (function in src/utils.py, line 1)")
    await symbol.click()  # the active one: the list reads the map's symbols first
    await box.press_sequentially(" and @slugi")
    await expect(symbol).to_have_attribute("aria-selected", "true", timeout=SLOW)
    await box.press("Shift+Enter")
    body = page.get_by_role("button", name="Remove mention body of symbol slugify in src/utils.py")
    await expect(body).to_be_visible()
    await page.get_by_role("button", name="Remove mention symbol slugify in src/utils.py").click()
    await expect(files.get_by_role("checkbox", name="src/utils.py")).not_to_be_checked()
    await expect(box).to_have_value("Explain @slugify  and @slugify ")

    await box.press("Enter")
    log = page.get_by_role("log", name="Conversation")
    await expect(log).to_contain_text("It lowers and dashes.", timeout=SLOW)
    sent = log.get_by_role("article", name="Your message").last.get_by_role(
        "list", name="Mentioned"
    )
    await expect(sent).to_contain_text("slugify")
    await expect(sent).to_contain_text("body")
    await expect(page.get_by_role("region", name="Context")).to_contain_text("1 tool output")
    await expect(files.get_by_role("checkbox", name="src/utils.py")).not_to_be_checked()
    await _looks(page, "mentions-body-sent")
