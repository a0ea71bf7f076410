"""The small things of daily use (issue 12, item 8): the tab's title, keyboard shortcuts to
the file filter, whole file names, and no console error on send, upload or search."""

from __future__ import annotations

import io

import pytest
from PIL import Image as PILImage
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot, send_message

pytestmark = pytest.mark.asyncio(loop_scope="session")

LONG_NAME = "src/a_rather_long_module_name_for_the_request_context_manager.py"


def _collect_errors(page) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return errors


def _png() -> bytes:
    out = io.BytesIO()
    PILImage.new("RGB", (64, 48), (0, 128, 128)).save(out, format="PNG")
    return out.getvalue()


async def _send_and_wait(page, text: str) -> None:
    await send_message(page, text, f"Fake reply to: {text}")


async def test_sends_an_upload_and_a_history_search_log_no_error(server, page):
    errors = _collect_errors(page)
    await page.goto(server.session_url)
    await expect(page).to_have_title("Untitled session · sample-repo · acdc")
    await _send_and_wait(page, "Where is greet defined?")
    await expect(page).to_have_title("Where is greet defined? · sample-repo · acdc")
    await _send_and_wait(page, "And who calls it?")  # the second send: no #empty-hint to swap
    await page.get_by_label("Attach image").set_input_files(
        files=[{"name": "teal.png", "mimeType": "image/png", "buffer": _png()}]
    )
    tray = page.get_by_role("group", name="Pending attachments")
    await expect(tray.get_by_role("img", name="Pending image 64×48")).to_be_visible()
    await page.get_by_role("link", name="History").click()
    search = page.get_by_role("searchbox", name="Search history")
    await search.fill("greet")
    await search.press("Enter")
    results = page.get_by_role("region", name="Search results")
    await expect(results).to_contain_text("Where is greet defined?")
    await search.fill("calls")
    await search.press("Enter")
    await expect(results).to_contain_text("And who calls it?")
    assert errors == []


async def test_slash_types_a_command_in_the_box_and_filters_from_elsewhere(server, page):
    await page.goto(server.session_url)
    box = page.get_by_role("textbox", name="Message")
    filter_box = page.get_by_role("searchbox", name="Filter files")
    await expect(box).to_be_focused()  # as the page opens
    # A fresh page: "/compact" typed straight away is a command, never a filter.
    await page.keyboard.type("/compact")
    await expect(box).to_have_value("/compact")
    await expect(box).to_be_focused()
    await expect(filter_box).to_have_value("")
    # Ctrl+K (Cmd+K on a Mac) reaches the filter from anywhere, the text kept.
    await page.keyboard.press("Control+k")
    await expect(filter_box).to_be_focused()
    await expect(box).to_have_value("/compact")
    await box.focus()
    await page.keyboard.press("Meta+k")
    await expect(filter_box).to_be_focused()
    await filter_box.press("Escape")
    # Outside any text field, "/" goes to the filter.
    await page.get_by_role("region", name="Files").click(position={"x": 5, "y": 5})
    await page.keyboard.press("/")
    await expect(filter_box).to_be_focused()
    await expect(filter_box).to_have_value("")
    await page.keyboard.type("app")
    await expect(page.get_by_role("checkbox", name="README.md")).to_have_count(0)
    await expect(box).to_have_value("/compact")


async def test_a_long_file_name_is_shown_whole(server, page):
    (server.repo / LONG_NAME).write_text("VALUE = 1\n")
    await page.goto(server.session_url)
    row = page.get_by_role("region", name="Files").locator(f'[data-row="{LONG_NAME}"]')
    name = row.locator(".name")
    await expect(name).to_have_text(LONG_NAME.split("/")[-1])
    await expect(name).to_have_attribute("title", LONG_NAME)
    assert await name.evaluate("el => el.scrollWidth <= el.clientWidth")  # not cut
    await screenshot(page, "picker-long-name")


async def test_the_hud_counts_files_the_tools_activated_and_a_dry_run_costs_nothing(server, page):
    server.script_replies(
        {"tool_calls": [{"name": "activate", "arguments": {"id": "README.md"}}]},
        {"tool_calls": [{"name": "activate", "arguments": {"id": "src/app.py"}}]},
        "Both files are in the context now.",
    )
    await page.goto(server.session_url)
    hud = page.get_by_role("region", name="Context")
    send = page.get_by_role("button", name="Send", exact=True)
    await expect(send).to_be_enabled(timeout=SLOW)
    await page.get_by_role("textbox", name="Message").fill("Activate the readme and the app")
    await send.click()
    await expect(page.get_by_role("log", name="Conversation")).to_contain_text(
        "Both files are in the context now.", timeout=SLOW
    )
    await expect(hud).to_contain_text("· 2 files")
    await expect(page.get_by_role("checkbox", name="README.md")).to_be_checked()

    chooser = page.get_by_role("combobox", name="Model")
    await chooser.fill("acdc/dry-run")
    await chooser.press("Enter")
    await expect(chooser).to_have_value("acdc/dry-run")
    await expect(send).to_be_enabled(timeout=SLOW)
    await page.get_by_role("textbox", name="Message").fill("What would this cost?")
    await send.click()
    await expect(page.get_by_role("log", name="Conversation")).to_contain_text(
        "Dry run: nothing was sent to a model", timeout=SLOW
    )
    await expect(hud).to_contain_text("no cost (dry run)")
    await expect(hud).not_to_contain_text("$0.0000")
    await screenshot(page, "hud-dry-run")
