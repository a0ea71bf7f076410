"""Light and dark, and History transcripts drawn like the chat (issue 12, "looks cared for").

Dark mode follows the system's prefers-color-scheme (emulated by Playwright per browser
context) until the header's "Dark mode" toggle is pressed; that choice is remembered across
reloads and pages. "Legible" is measured, not eyeballed: the contrast ratio between an
element's text colour and the first opaque background behind it, as WCAG computes it.
"""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, access_cookie, screenshot, send_message

pytestmark = pytest.mark.asyncio(loop_scope="session")

REPLY = (
    "The **greet** function:\n\n```python\ndef greet(name):\n    return f'hello {name}'\n```\n\n"
    "It returns a string."
)
CONTRAST = """(element) => {
  if (!element.isConnected) throw new Error("the element was swapped out before it was measured");
  const rgb = (text) => (text.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const c = [r, g, b].map((v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  let node = element, back = null;
  while (node && node.nodeType === 1) {
    const value = rgb(getComputedStyle(node).backgroundColor);
    if (value.length === 3 || (value.length === 4 && value[3] > 0.9)) { back = value; break; }
    node = node.parentElement;
  }
  back = back || [255, 255, 255];
  const [a, b] = [lum(rgb(getComputedStyle(element).color)), lum(back)];
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}"""
DARK_BODY = "rgb(15, 18, 24)"
LIGHT_BODY = "rgb(246, 247, 249)"


async def _finished(reply) -> None:
    """Wait until the finished frame has replaced the streamed reply and copy.js has wrapped
    its code blocks: an element measured before that swap is detached, and a detached
    element's computed colours are empty strings (a contrast of NaN)."""
    await expect(reply).to_have_attribute("data-status", "complete", timeout=SLOW)
    await expect(reply.get_by_role("button", name="Copy code")).to_be_visible()


async def _legible(locator, least: float = 4.5) -> None:
    ratio = await locator.evaluate(CONTRAST)
    assert ratio >= least, f"contrast {ratio:.2f} < {least} for {locator}"


async def _context(browser, server, scheme: str):
    """A context of its own in `scheme`, holding the server's access cookie."""
    context = await (await browser.get()).new_context(
        viewport={"width": 1400, "height": 900}, color_scheme=scheme
    )
    await context.add_cookies([access_cookie(server)])
    return context


async def _shots(page, name: str) -> None:
    """Screenshots at both widths; neither may push the page sideways."""
    for width in (1400, 800):
        await page.set_viewport_size({"width": width, "height": 900})
        wide = await page.evaluate("document.documentElement.scrollWidth")
        assert wide <= width, f"{name}: the page is {wide} px wide in a {width} px window"
        await screenshot(page, f"{name}-{width}")
    await page.set_viewport_size({"width": 1400, "height": 900})


async def test_a_dark_system_gets_a_dark_page_and_the_toggle_remembers_light(server, browser):
    server.script_replies({"text": REPLY})
    (server.repo / ".env").write_text("ACDC_E2E_SECRET=looks\n")  # for the confirm dialog
    context = await _context(browser, server, "dark")
    try:
        page = await context.new_page()
        await page.goto(server.session_url)
        toggle = page.get_by_role("button", name="Dark mode")
        await expect(toggle).to_have_attribute("aria-pressed", "true")
        await expect(page.locator("body")).to_have_css("background-color", DARK_BODY)
        await send_message(page, "Show me greet")
        reply = page.get_by_role("article", name="acdc reply")
        await expect(reply).to_contain_text("It returns a string.", timeout=SLOW)
        await _finished(reply)
        for part in (
            reply.get_by_text("It returns a string."),
            reply.locator("pre .k").first,  # a highlighted keyword
            page.get_by_role("article", name="Your message").get_by_text("Show me greet"),
            page.get_by_role("textbox", name="Message"),
            page.get_by_role("region", name="Files").get_by_text("README.md"),
            page.get_by_role("link", name="History"),
            page.get_by_role("button", name="New session"),
        ):
            await _legible(part)
        await _shots(page, "looks-chat-dark")
        files = page.get_by_role("region", name="Files")
        await files.get_by_role("checkbox", name=".env", exact=True).click()
        dialog = page.get_by_role("dialog", name="Send a locked file?")
        await expect(dialog).to_be_visible()
        await _legible(dialog.get_by_text("This file looks like a secret"))
        await _legible(dialog.get_by_role("button", name="Cancel"))
        await screenshot(page, "looks-dialog-dark")
        await dialog.get_by_role("button", name="Cancel").click()
        await expect(dialog).to_be_hidden()

        await toggle.click()
        await expect(toggle).to_have_attribute("aria-pressed", "false")
        await expect(page.locator("body")).to_have_css("background-color", LIGHT_BODY)
        await page.reload()
        await expect(page.get_by_role("button", name="Dark mode")).to_have_attribute(
            "aria-pressed", "false"
        )
        await expect(page.locator("body")).to_have_css("background-color", LIGHT_BODY)
        await _legible(page.get_by_role("article", name="acdc reply").locator("pre .k").first)
        await _shots(page, "looks-chat-light")

        await page.get_by_role("link", name="History").click()
        await expect(page).to_have_url(re.compile(r"/history/$"))
        await expect(page.locator("body")).to_have_css("background-color", LIGHT_BODY)
        await page.get_by_role("button", name="Dark mode").click()
        await expect(page.locator("body")).to_have_css("background-color", DARK_BODY)
        await _legible(page.get_by_role("searchbox", name="Search history"))
        await _legible(page.get_by_role("link", name="Show me greet").first)
        await _shots(page, "looks-history-dark")
    finally:
        await context.close()


async def test_a_history_transcript_is_drawn_like_the_chat(server, browser):
    server.script_replies({"text": REPLY})
    for scheme in ("light", "dark"):
        context = await _context(browser, server, scheme)
        try:
            page = await context.new_page()
            await page.goto(server.session_url if scheme == "light" else server.url + "history/")
            if scheme == "light":
                await send_message(page, "Explain greet")
                reply = page.get_by_role("article", name="acdc reply")
                await expect(reply).to_contain_text("It returns a string.", timeout=SLOW)
                await _finished(reply)
                await page.get_by_role("link", name="History").click()
            await page.get_by_role("link", name="Explain greet").first.click()
            transcript = page.get_by_role("region", name="Messages")
            reply = transcript.get_by_role("article", name="acdc reply")
            await expect(reply.locator("strong")).to_have_text("greet")
            await expect(reply).not_to_contain_text("**")
            await expect(reply.locator("pre code")).to_contain_text("def greet(name):")
            keyword = reply.locator("pre .k").first
            await expect(keyword).to_have_text("def")
            assert await keyword.evaluate("e => getComputedStyle(e).color") != (
                await reply.locator("pre").evaluate("e => getComputedStyle(e).color")
            ), "the keyword is not highlighted"
            await _legible(keyword)
            await _legible(reply.get_by_text("It returns a string."))
            await _shots(page, f"looks-history-transcript-{scheme}")
        finally:
            await context.close()
