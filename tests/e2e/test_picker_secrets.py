"""Secret-shaped files in the Files panel: locked, and sent only after a confirmation."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import screenshot

pytestmark = pytest.mark.asyncio(loop_scope="session")

MARKER = "ACDC_E2E_SECRET=marker-5b1e"
REASON = re.compile(r"^locked: this file looks like a secret")


def select_frames(page) -> list[dict]:
    """Every select frame the page sends over its websocket, as it sends it."""
    frames: list[dict] = []

    def watch(socket) -> None:
        def sent(payload) -> None:
            if isinstance(payload, str) and '"select"' in payload:
                frames.append(json.loads(payload))

        socket.on("framesent", sent)

    page.on("websocket", watch)
    return frames


def listed(value) -> list[str]:
    """htmx sends one value of a name as a string, several as a list."""
    return [value] if isinstance(value, str) else list(value or [])


async def test_a_secret_is_locked_and_sent_only_after_confirming(server, page):
    (server.repo / ".env").write_text(MARKER + "\n")
    frames = select_frames(page)
    await page.goto(server.session_url)
    files = page.get_by_role("region", name="Files")
    total = files.locator("#picker-total")
    box = files.get_by_role("checkbox", name=".env", exact=True)
    row = files.locator('[data-row=".env"]')

    # Locked: a lock with its reason, for the eye (tooltip) and for a screen reader.
    lock = row.get_by_role("img", name=REASON)
    await expect(lock).to_be_visible()
    await expect(lock).to_have_attribute("title", re.compile("looks like a secret"))
    await expect(box).to_have_accessible_description(REASON)
    await expect(box).to_be_enabled()
    await expect(total).to_contain_text("0 selected")
    await screenshot(page, "picker-secret-locked")

    # Checking it asks first; Cancel (the default) leaves nothing selected.
    dialog = page.get_by_role("dialog", name="Send a locked file?")
    await box.click()
    await expect(dialog).to_be_visible()
    await expect(dialog).to_contain_text("This file looks like a secret; it will be sent to acdc.")
    await expect(dialog).to_contain_text(".env")
    await expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
    await screenshot(page, "picker-secret-confirm")
    await dialog.get_by_role("button", name="Cancel").click()
    await expect(dialog).to_be_hidden()
    await expect(box).not_to_be_checked()
    await expect(total).to_contain_text("0 selected")

    # The keyboard: Space asks, Escape cancels, the focus is back on the checkbox.
    await box.focus()
    await page.keyboard.press("Space")
    await expect(dialog).to_be_visible()
    await page.keyboard.press("Escape")
    await expect(dialog).to_be_hidden()
    await expect(box).not_to_be_checked()
    await expect(box).to_be_focused()
    await expect(total).to_contain_text("0 selected")
    assert frames == [], "nothing is sent while the person has not confirmed"

    # Confirming selects it; the server takes it (the HUD counts it) with its confirmation.
    await page.keyboard.press("Space")
    await dialog.get_by_role("button", name="Send it anyway").click()
    await expect(dialog).to_be_hidden()
    await expect(box).to_be_checked()
    await expect(box).to_be_focused()
    await expect(total).to_contain_text("1 selected")
    context = page.get_by_role("region", name="Context")
    await expect(context).to_contain_text(re.compile(r"\b1 file\b"))
    assert listed(frames[-1]["path"]) == [".env"]
    assert listed(frames[-1]["confirm"]) == [".env"]

    # A later choice names its own box only: the server holds the confirmed secret.
    await files.get_by_role("checkbox", name="README.md").check()
    await expect(total).to_contain_text("2 selected")
    await expect(context).to_contain_text(re.compile(r"\b2 files\b"))
    await screenshot(page, "picker-secret-selected")
    assert listed(frames[-1]["path"]) == ["README.md"] and "confirm" not in frames[-1]

    # After a reload the server's own record shows it active, and it asks no more.
    await page.reload()
    await expect(box).to_be_checked()
    await expect(files.get_by_role("checkbox", name="README.md")).to_be_checked()
    await expect(total).to_contain_text("2 selected")
    await expect(page.locator(".notice.error")).to_have_count(0)

    # Unchecked, it is locked again: checking it asks again.
    await box.uncheck()
    await expect(total).to_contain_text("1 selected")
    await expect(context).to_contain_text(re.compile(r"\b1 file\b"))
    assert "confirm" not in frames[-1]
    await box.click()
    await expect(dialog).to_be_visible()
    await dialog.get_by_role("button", name="Cancel").click()
    await expect(box).not_to_be_checked()


async def test_a_folder_skips_its_locked_files_and_says_so(server, page):
    (server.repo / "src" / "deploy.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    await page.goto(server.session_url)
    files = page.get_by_role("region", name="Files")
    total = files.locator("#picker-total")
    folder = files.get_by_role("checkbox", name="folder src")
    await expect(files.locator('[data-row="src/deploy.pem"]').get_by_role("img")).to_have_attribute(
        "aria-label", REASON
    )

    await folder.check()
    await expect(files.get_by_role("status")).to_contain_text("1 locked file was skipped")
    await expect(files.get_by_role("checkbox", name="src/app.py")).to_be_checked()
    await expect(files.get_by_role("checkbox", name="src/deploy.pem")).not_to_be_checked()
    await expect(total).to_contain_text("1 selected")
    await expect(folder).to_be_checked()  # all it can take: not shown as partly selected
    assert not await folder.evaluate("box => box.indeterminate")
    await expect(page.get_by_role("dialog")).to_have_count(0)
    await screenshot(page, "picker-secret-folder")

    await folder.uncheck()
    await expect(total).to_contain_text("0 selected")
    await expect(files.get_by_role("status")).to_be_hidden()


async def test_a_folder_ticked_before_the_paths_arrive_is_taken_once_they_do(server, page):
    (server.repo / "src" / "deploy.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    held = asyncio.Event()  # files.json (the paths and the locks) waits for the tick

    async def hold(route) -> None:
        await held.wait()
        await route.continue_()

    await page.route(re.compile(r"/files\.json$"), hold)
    await page.goto(server.session_url)
    files = page.get_by_role("region", name="Files")
    folder = files.get_by_role("checkbox", name="folder src")
    await folder.check()  # its rows are drawn; what it holds is not known yet
    held.set()

    await expect(files.get_by_role("status")).to_contain_text("1 locked file was skipped")
    await expect(files.get_by_role("checkbox", name="src/app.py")).to_be_checked()
    await expect(files.get_by_role("checkbox", name="src/deploy.pem")).not_to_be_checked()
    await expect(files.locator("#picker-total")).to_contain_text("1 selected")
