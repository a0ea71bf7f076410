"""Tool cards as a person sees them while a turn streams: one card per call, the call as
the model made it."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot

pytestmark = pytest.mark.asyncio(loop_scope="session")

LIST_CALL = "list_files(path='src', pattern='*_*.py')"
READ_CALL = "read_file(path='src/snake_case_util.py')"


async def test_two_tool_rounds_show_two_cards_with_the_calls_verbatim(server, page):
    (server.repo / "src" / "snake_case_util.py").write_text("def to_snake_case(text):\n    ...\n")
    # The fake gives calls scripted without an id ids of their own; the answer streams
    # slowly so the cards are looked at while the turn is still running.
    server.script_replies(
        {"tool_calls": [{"name": "list_files", "arguments": {"path": "src", "pattern": "*_*.py"}}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "src/snake_case_util.py"}}]},
        {"text": "It turns text into snake_case. " * 10, "chunk_size": 6, "chunk_delay": 0.4},
    )
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    await page.goto(server.session_url)
    await page.get_by_role("textbox", name="Message").fill("What is in the snake case helper?")
    await page.get_by_role("button", name="Send").click()

    log = page.get_by_role("log", name="Conversation")
    reply = log.get_by_role("article", name="acdc reply").last
    listed = reply.get_by_role("group", name=LIST_CALL)
    read = reply.get_by_role("group", name=READ_CALL)
    await expect(reply).to_contain_text("snake_case.", timeout=SLOW)
    await expect(reply.get_by_text("Streaming…")).to_be_visible()
    await expect(listed).to_contain_text("done")
    await expect(read).to_contain_text("done")
    await expect(reply.get_by_role("group")).to_have_count(2)
    await expect(listed.locator(".tool-name")).to_have_text("list_files")
    await expect(read.locator(".tool-name")).to_have_text("read_file")
    calls = await reply.get_by_role("group").evaluate_all(
        "cards => cards.map(c => [c.id, c.dataset.call, c.querySelector('summary').innerText])"
    )
    assert len({dom_id for dom_id, _, _ in calls}) == 2, calls
    assert len({call_id for _, call_id, _ in calls}) == 2, calls
    for (_, _, summary), name in zip(calls, ["list_files", "read_file"], strict=True):
        assert summary.count(name) == 1, summary  # the name shows once, underscore kept
    await expect(reply.get_by_text("Streaming…")).to_be_visible()  # all seen mid-turn
    await screenshot(page, "tool-cards-streaming")

    await read.locator("summary").click()
    await expect(read.locator("pre")).to_contain_text("def to_snake_case(text):")
    await screenshot(page, "tool-cards-open")
    await page.get_by_role("button", name="Stop").click()
    await expect(reply).to_have_attribute("data-status", re.compile("."), timeout=SLOW)
    await page.reload()
    await expect(log.get_by_role("group", name=LIST_CALL)).to_be_visible()
    await expect(log.get_by_role("group", name=READ_CALL)).to_be_visible()
    assert errors == []
