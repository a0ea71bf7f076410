"""Daily use, round two (issue 23): a provider retry counts down in the reply, the model box
says at once what it knows of a name, the Files panel keeps names whole and ranks what the
filter finds, and small layout faults at 800 px and 900 px high."""

from __future__ import annotations

import io
import re

import pytest
from PIL import Image as PILImage
from playwright.async_api import expect

from tests.e2e.conftest import ARTIFACTS, SLOW, FirstGetHeld, screenshot, send_message

pytestmark = pytest.mark.asyncio(loop_scope="session")

LONG_ANSWER = " ".join(f"word{n}" for n in range(80))


async def test_a_provider_retry_counts_down_in_the_reply_until_the_answer_streams(server, page):
    server.script_replies(
        {"error": "rate_limit", "retry_after": 3},
        {"text": LONG_ANSWER, "chunk_size": 6, "chunk_delay": 0.15},
    )
    await page.goto(server.session_url)
    await send_message(page, "Is anyone there?")
    reply = page.get_by_role("article", name="acdc reply")
    note = reply.get_by_role("status").filter(has_text="Rate limited by the provider")
    await expect(note).to_have_text(
        re.compile(r"Rate limited by the provider; retrying in [123] s \(attempt 2 of up to 4\)")
    )
    await page.emulate_media(color_scheme="dark")
    await page.screenshot(path=str(ARTIFACTS / "retry-countdown-dark.png"))
    await expect(note).to_contain_text("retrying in 1 s")  # it counts down in the page
    await expect(reply).to_contain_text("word0", timeout=SLOW)
    await expect(note).to_be_hidden()  # gone as the answer streams, before it ends
    await expect(reply.get_by_text("Streaming…")).to_be_visible()
    await expect(reply).to_contain_text("word79", timeout=SLOW)
    await expect(page.get_by_role("alert").filter(has_text="Rate limited")).to_have_count(0)


def _write(root, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


PYTHON = "".join(f"def function_{n}(value):\n    return value * {n}\n\n" for n in range(120))


async def test_file_names_wrap_only_between_words_in_the_default_panel(server, page):
    _write(server.repo, {"src/click/exceptions.py": PYTHON, "src/click/_termui_impl.py": PYTHON})
    await page.goto(server.session_url)
    files = page.get_by_role("region", name="Files")
    # A small repository opens fully: src/click/ is drawn two levels in.
    for path, piece in (
        ("src/click/exceptions.py", "exceptions."),
        ("src/click/_termui_impl.py", "termui_"),
    ):
        await expect(files.get_by_role("checkbox", name=path)).to_be_visible()
        # Measured in the page until the name is laid out: the Files panel may be redrawn
        # (the watcher sees the files this test wrote) between finding the row and reading
        # its rectangles, and a detached node has none.
        handle = await page.wait_for_function(
            """([path, piece]) => {
                const row = [...document.querySelectorAll('[data-row] .name')].find(
                    (el) => el.closest('[data-row]').dataset.row === path);
                const node = row && [...row.childNodes].find((n) => n.textContent === piece);
                if (!node || !node.isConnected) return 0;
                const range = document.createRange();
                range.selectNodeContents(node);
                return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
            }""",
            arg=[path, piece],
            timeout=SLOW,
        )
        lines = await handle.json_value()
        assert lines == 1, f"{piece!r} of {path} is broken across {lines} lines"
    assert await files.evaluate("el => Math.round(el.getBoundingClientRect().width)") == 250
    await screenshot(page, "picker-names-250")


async def test_the_filter_ranks_what_it_finds_and_drops_scattered_letters(server, page):
    _write(
        server.repo,
        {
            "a_build/output_table.py": "X = 1\n",
            "docs/utils.md": "# Utilities\n",
            "src/click/utils.py": "Y = 2\n",
            "tests/test_utils.py": "Z = 3\n",
            ".devcontainer/devcontainer.json": "{}\n",
            ".env.example": "DEBUG=1\n",
        },
    )
    await page.goto(server.session_url)
    files = page.get_by_role("region", name="Files")
    filter_box = files.get_by_role("searchbox", name="Filter files")
    await expect(files.get_by_role("checkbox", name="docs/utils.md")).to_be_attached()
    await filter_box.fill("utl")
    found = files.get_by_role("checkbox")
    await expect(found).to_have_count(4)
    names = [await box.get_attribute("aria-label") for box in await found.all()]
    assert names == [
        "docs/utils.md",
        "src/click/utils.py",
        "tests/test_utils.py",
        "a_build/output_table.py",
    ]
    await screenshot(page, "picker-filter-ranked")
    await page.set_viewport_size({"width": 800, "height": 900})
    await page.emulate_media(color_scheme="dark")
    await page.screenshot(path=str(ARTIFACTS / "picker-filter-ranked-800-dark.png"))
    await filter_box.fill(".env")
    await expect(files.get_by_role("checkbox", name=".env.example")).to_be_visible()
    await expect(
        files.get_by_role("checkbox", name=".devcontainer/devcontainer.json")
    ).to_have_count(0)


UTL_FOUND = [
    "docs/utils.md",
    "src/click/utils.py",
    "tests/test_utils.py",
    "a_build/output_table.py",
]

LABELS = "boxes => boxes.map((box) => box.getAttribute('aria-label'))"  # in one reading


async def test_a_filter_typed_before_the_list_of_paths_came_runs_again_when_it_comes(server, page):
    """The rows came (so the filter box is in use) but the flat list of paths the filter
    ranks had not: it found nothing then and must not stay so."""
    _write(server.repo, {name: "X = 1\n" for name in UTL_FOUND})
    held = FirstGetHeld()
    await page.route("**/files.json", held.handle)
    await page.goto(server.session_url)
    files = page.get_by_role("region", name="Files")
    await expect(files.get_by_role("checkbox", name="docs/utils.md")).to_be_attached()
    await held.arrived.wait()
    await files.get_by_role("searchbox", name="Filter files").fill("utl")
    await expect(files.get_by_text("Reading the list of files…")).to_be_visible()
    await expect(files.get_by_role("checkbox")).to_have_count(0)  # nothing to rank yet
    await expect(files.get_by_text("No file matches the filter.")).to_have_count(0)  # not yet
    held.release()
    found = files.get_by_role("checkbox")
    await expect(found).to_have_count(4)
    assert await found.evaluate_all(LABELS) == UTL_FOUND  # one reading of the page
    await expect(files.get_by_text("Reading the list of files…")).to_have_count(0)
    await page.unroute("**/files.json")


async def _header_height(page) -> float:
    return await page.locator("header.topbar").evaluate("el => el.getBoundingClientRect().height")


async def test_the_model_box_says_at_once_what_it_does_not_know_and_offers_the_near_name(
    server, page
):
    await page.goto(server.session_url)
    chooser = page.get_by_role("combobox", name="Model")
    await expect(chooser).to_have_value("acdc/fake")
    height = await _header_height(page)

    await chooser.fill("nonexistent/model-xyz")
    await chooser.press("Enter")
    note = page.get_by_role("status").filter(has_text="litellm does not know")
    await expect(note).to_have_text(
        "litellm does not know nonexistent/model-xyz: it will be sent as is; "
        "window and prices unknown."
    )
    assert await _header_height(page) == height  # the note hangs below, out of the flow
    await screenshot(page, "model-unknown")

    await chooser.fill("openai/gpt-4.1-mni")
    await chooser.press("Enter")
    await expect(note).to_contain_text("Did you mean openai/gpt-4.1-mini?")
    assert await _header_height(page) == height
    for width, scheme in ((1400, "light"), (800, "dark")):
        await page.set_viewport_size({"width": width, "height": 900})
        await page.emulate_media(color_scheme=scheme)
        await screenshot(page, f"model-suggestion-{width}-{scheme}")
    await note.get_by_role("button", name="openai/gpt-4.1-mini").click()
    await expect(chooser).to_have_value("openai/gpt-4.1-mini")
    await expect(page.get_by_text("Takes effect on the next message")).to_be_visible()
    await expect(note).to_have_count(0)


async def test_the_offline_fake_model_shows_no_price(server, page):
    await page.goto(server.session_url)
    await send_message(page, "What does it cost?", "Fake reply to: What does it cost?")
    hud = page.get_by_role("region", name="Context")
    await expect(hud).to_contain_text("no cost (offline model)")
    await expect(hud).to_contain_text("1 request")
    await expect(hud).not_to_contain_text("$")


async def test_a_reload_while_the_reply_streams_logs_no_error(server, page):
    words = " ".join(f"w{n}" for n in range(600))
    server.script_replies({"text": words + " THE END", "chunk_size": 3, "chunk_delay": 0.02})
    await page.goto(server.session_url)
    await send_message(page, "Stream quickly")
    reply = page.get_by_role("article", name="acdc reply")
    await expect(reply).to_contain_text("w3", timeout=SLOW)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    for _ in range(4):  # each reload joins the stream between two frames
        await page.reload()
        await expect(reply).to_contain_text("w", timeout=SLOW)
    await expect(reply).to_contain_text("THE END", timeout=SLOW)
    assert errors == []


def _png(color: tuple[int, int, int]) -> bytes:
    out = io.BytesIO()
    PILImage.new("RGB", (640, 480), color).save(out, format="PNG")
    return out.getvalue()


async def test_send_stays_in_a_900_px_window_with_a_long_chat_and_two_attachments(server, page):
    await page.set_viewport_size({"width": 1400, "height": 900})
    server.script_replies(*[("A long answer line. " * 40) for _ in range(4)])
    await page.goto(server.session_url)
    for n in range(4):
        await send_message(page, f"Question {n}", "A long answer line.")
        await expect(page.get_by_role("button", name="Send", exact=True)).to_be_enabled(
            timeout=SLOW
        )
    await page.get_by_label("Attach image").set_input_files(
        files=[
            {"name": "teal.png", "mimeType": "image/png", "buffer": _png((0, 128, 128))},
            {"name": "plum.png", "mimeType": "image/png", "buffer": _png((128, 0, 128))},
        ]
    )
    tray = page.get_by_role("group", name="Pending attachments")
    await expect(tray.get_by_role("img")).to_have_count(2)
    send = page.get_by_role("button", name="Send", exact=True)
    box = await send.bounding_box()
    assert box is not None and box["y"] + box["height"] <= 900
    assert await page.evaluate("window.scrollY") == 0
    await page.screenshot(path=str(ARTIFACTS / "attachments-900.png"))


async def test_at_800_px_the_page_opens_at_its_header_with_room_for_the_tree(server, page):
    _write(server.repo, {f"pkg/module_{n:02}.py": "X = 1\n" for n in range(40)})
    for scheme in ("light", "dark"):
        await page.emulate_media(color_scheme=scheme)
        await page.set_viewport_size({"width": 800, "height": 640})
        await page.goto(server.session_url)
        await expect(page.get_by_role("checkbox", name="pkg/module_00.py")).to_be_visible()
        message = page.get_by_role("textbox", name="Message")
        await expect(message).to_be_focused()
        # The box is below the fold: focusing it must not scroll the header away.
        assert await message.evaluate("el => el.getBoundingClientRect().bottom > innerHeight")
        assert await page.evaluate("window.scrollY") == 0
        tree = page.get_by_role("region", name="Files").locator("#file-tree-root")
        rows = await tree.evaluate(
            """el => [...el.querySelectorAll('[role=treeitem]')].filter((row) => {
                const r = row.getBoundingClientRect(), t = el.getBoundingClientRect();
                return r.top >= t.top && r.bottom <= t.bottom;
            }).length"""
        )
        assert rows >= 10, f"the tree shows only {rows} rows at 800 px"
        await page.screenshot(path=str(ARTIFACTS / f"narrow-800-{scheme}.png"))
