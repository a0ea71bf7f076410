"""A disk that fills up under a streaming reply, in Chromium: `acdc serve` keeps its data
folder on a small tmpfs the test mounts (tests/chat/faults/smalldisk.py) and fills for
real once the reply streams. The page shows the one line naming the full disk and where,
the text shown so far stays; once space is back the reply's ending is stored by itself
(an error naming the full disk), the next message is answered, and the server's log has
no traceback.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import expect

from tests.chat.faults.smalldisk import SmallDisk
from tests.e2e.conftest import SLOW, screenshot, signed_in_page, start_server

pytestmark = pytest.mark.asyncio(loop_scope="session")
SHOTS = Path("/tmp/scale/shots")  # a copy for the person looking, beside test-artifacts/
LONG = " ".join(f"word{n}" for n in range(400))
ROOM = 64 * 1024 * 1024  # the data folder's disk: room to start and serve, then filled


@pytest.fixture
def on_small_disk(tmp_path_factory):
    disk = SmallDisk(tmp_path_factory.mktemp("small") / "disk", size=ROOM)
    data = disk.folder / "data"
    try:
        running = start_server(tmp_path_factory.mktemp("acdc-server"), {"ACDC_DATA_DIR": str(data)})
        try:
            yield disk, running
        finally:
            running.stop()
            running.wait_stopped()
    finally:
        disk.close()


@pytest_asyncio.fixture(loop_scope="session")
async def tab(browser, on_small_disk):
    async with signed_in_page(browser, on_small_disk[1]) as page:
        yield page


async def shot(page, name: str) -> None:
    await screenshot(page, name, copy_to=SHOTS)


def _replies(database: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(database) as db:
        return db.execute(
            "SELECT status, error FROM history_message WHERE role = 'assistant' ORDER BY rowid"
        ).fetchall()


async def _ended(database: Path) -> tuple[str, str]:
    """The reply's row once it is stored and no longer says streaming (the server retries
    the store; the row may not be there before it)."""
    deadline = time.monotonic() + SLOW / 1000
    while (found := (_replies(database) or [("streaming", "")])[-1])[0] == "streaming":
        assert time.monotonic() < deadline, f"the reply still streaming after {SLOW} ms"
        await asyncio.sleep(0.1)  # a poll of the stored row, not a wait for a guess
    return found


async def test_the_disk_filling_mid_stream_is_one_line_in_the_page_and_the_next_works(
    on_small_disk, tab
):
    disk, running = on_small_disk
    slow = {"text": LONG, "chunk_size": 8, "chunk_delay": 0.05}
    running.script.write_text(json.dumps([slow, "Back again."]))
    await tab.goto(running.new_session())
    await tab.get_by_role("textbox", name="Message").fill("Write a lot.")
    await tab.get_by_role("button", name="Send", exact=True).click()
    log = tab.get_by_role("log", name="Conversation")
    await expect(log).to_contain_text("word20", timeout=SLOW)
    disk.fill()
    await expect(log).to_contain_text("The disk is full", timeout=SLOW)
    await expect(log).to_contain_text(f"free space on {disk.folder / 'data'}")
    assert "Something went wrong" not in await log.inner_text()
    await shot(tab, "disk-full-mid-stream")

    disk.free()  # the ending is stored by itself, with no new message
    status, reason = await _ended(disk.folder / "data" / "acdc.sqlite3")
    assert status == "error" and reason.startswith("The disk is full")
    await tab.get_by_role("textbox", name="Message").fill("And now?")
    await tab.get_by_role("button", name="Send", exact=True).click()
    await expect(log).to_contain_text("Back again.", timeout=SLOW)
    await expect(log.locator("article.assistant").first).to_contain_text("word20")
    await shot(tab, "disk-full-then-answered")
    assert "Traceback" not in running.log.read_text()
