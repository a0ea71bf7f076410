"""The context HUD and file selection, as a person sees them in the browser."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot

pytestmark = pytest.mark.asyncio(loop_scope="session")


def _write_big_file(server) -> None:
    # ~950 kB of varied text: under the 1 MB size cap, over acdc/fake's 200k-token window.
    lines = (
        f"line {n}: the parser reads token {n * 7} and emits node {n % 97}\n" for n in range(16_000)
    )
    (server.repo / "big.txt").write_text("".join(lines))


async def test_the_hud_follows_selection_and_turns(server, page):
    await page.goto(server.session_url)
    hud = page.get_by_role("region", name="Context")
    await expect(hud).to_contain_text("Nothing sent yet")
    await page.get_by_role("checkbox", name="src/app.py").check()
    await expect(hud).to_contain_text("Active files")
    await page.get_by_role("textbox", name="Message").fill("Explain app.py")
    await page.get_by_role("button", name="Send").click()
    log = page.get_by_role("log", name="Conversation")
    await expect(log).to_contain_text("Fake reply to: Explain app.py", timeout=SLOW)
    await expect(hud).to_contain_text(re.compile(r"Cache hit \d+%"))
    await expect(hud).to_contain_text("History")
    await page.get_by_role("textbox", name="Message").fill("And again")
    await page.get_by_role("button", name="Send").click()
    await expect(log).to_contain_text("Fake reply to: And again", timeout=SLOW)
    await expect(hud).to_contain_text("2 requests")
    await expect(hud.get_by_role("img", name=re.compile("Cache-hit share"))).to_be_visible()
    await screenshot(page, "hud-after-two-turns")

    await page.reload()
    await expect(hud).to_contain_text("2 requests")
    await expect(page.get_by_role("checkbox", name="src/app.py")).to_be_checked()


async def test_a_file_too_large_for_the_window_is_shed_with_a_notice(server, page):
    _write_big_file(server)
    await page.goto(server.session_url)
    hud = page.get_by_role("region", name="Context")
    big = page.get_by_role("checkbox", name="big.txt")
    await big.check()
    await expect(hud.locator(".hud-level")).to_have_text(re.compile(r"^\d{3}"), timeout=SLOW)
    await expect(hud).to_have_class(re.compile("level-red"))
    await screenshot(page, "hud-over-budget")
    await page.get_by_role("textbox", name="Message").fill("Summarise big.txt")
    await page.get_by_role("button", name="Send").click()
    log = page.get_by_role("log", name="Conversation")
    notice = log.get_by_role("alert").filter(has_text="big.txt")
    await expect(notice).to_contain_text("Removed from context", timeout=SLOW)
    await expect(log).to_contain_text("Fake reply to: Summarise big.txt", timeout=SLOW)
    await expect(big).not_to_be_checked()
    await expect(hud).to_have_class(re.compile("level-green"))
    await screenshot(page, "file-shed")

    await page.reload()
    await expect(log).to_contain_text("Removed from context")
    await expect(page.get_by_role("checkbox", name="big.txt")).not_to_be_checked()
