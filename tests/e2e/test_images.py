"""A person attaches and pastes images, sends them, sees thumbnails, reloads, re-attaches."""

from __future__ import annotations

import io

import pytest
from PIL import Image as PILImage
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot

pytestmark = pytest.mark.asyncio(loop_scope="session")

PASTE_A_CANVAS = """async () => {
  const canvas = document.createElement("canvas");
  canvas.width = 160; canvas.height = 90;
  const g = canvas.getContext("2d");
  g.fillStyle = "#f59e0b"; g.fillRect(0, 0, 160, 90);
  g.fillStyle = "#1d4ed8"; g.fillRect(40, 20, 80, 50);
  const blob = await new Promise((done) => canvas.toBlob(done, "image/png"));
  const data = new DataTransfer();
  data.items.add(new File([blob], "pasted.png", { type: "image/png" }));
  const box = document.getElementById("message-input");
  box.focus();
  const init = { clipboardData: data, bubbles: true, cancelable: true };
  box.dispatchEvent(new ClipboardEvent("paste", init));
}"""


def png(size: tuple[int, int], colour: tuple[int, int, int]) -> bytes:
    out = io.BytesIO()
    PILImage.new("RGB", size, colour).save(out, format="PNG")
    return out.getvalue()


async def test_attached_and_pasted_images_are_sent_shown_and_survive_a_reload(server, page):
    server.script_replies({"text": "An orange and a teal picture."})
    await page.goto(server.session_url)
    attach = page.get_by_label("Attach image")
    tray = page.get_by_role("group", name="Pending attachments")
    await attach.set_input_files(
        files=[
            {"name": "teal.png", "mimeType": "image/png", "buffer": png((320, 200), (0, 128, 128))}
        ]
    )
    await expect(tray.get_by_role("img", name="Pending image 320×200")).to_be_visible()
    await page.evaluate(PASTE_A_CANVAS)
    await expect(tray.get_by_role("img", name="Pending image 160×90")).to_be_visible()

    await attach.set_input_files(
        files=[{"name": "notes.png", "mimeType": "image/png", "buffer": b"not a picture at all"}]
    )
    await expect(page.get_by_role("alert")).to_contain_text("notes.png: The file is not an image")
    await expect(tray.get_by_role("img")).to_have_count(2)
    await screenshot(page, "images-tray")

    await page.get_by_role("textbox", name="Message").fill("What colours are these?")
    await page.get_by_role("button", name="Send").click()
    log = page.get_by_role("log", name="Conversation")
    await expect(log).to_contain_text("An orange and a teal picture.", timeout=SLOW)
    await expect(log.get_by_role("img", name="Attached image 2")).to_be_visible()
    await expect(tray.get_by_role("img")).to_have_count(0)
    await screenshot(page, "images-sent")

    await page.reload()
    first = log.get_by_role("link", name="Attached image 1")
    await expect(first).to_be_visible()
    await expect(log.get_by_role("img", name="Attached image 2")).to_be_visible()
    full = await page.request.get(server.url.rstrip("/") + await first.get_attribute("href"))
    assert full.ok and full.headers["content-type"] == "image/png"
    assert "immutable" in full.headers["cache-control"]

    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    await log.get_by_role("button", name="Re-attach image 1").click()
    await expect(tray.get_by_role("img", name="Pending image 320×200")).to_be_visible()
    assert errors == []  # with no image pending, hx-include still names something
    await screenshot(page, "images-reloaded-reattached")


async def test_a_pending_image_can_be_removed_before_sending(server, page):
    await page.goto(server.session_url)
    tray = page.get_by_role("group", name="Pending attachments")
    await page.get_by_label("Attach image").set_input_files(
        files=[{"name": "a.png", "mimeType": "image/png", "buffer": png((50, 40), (200, 0, 0))}]
    )
    await expect(tray.get_by_role("img")).to_have_count(1)
    await tray.get_by_role("button", name="Remove image 50×40").click()
    await expect(tray.get_by_role("img")).to_have_count(0)
