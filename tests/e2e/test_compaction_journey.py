"""Compaction as a person sees it: it happens, it is announced, it survives a reload, it
can be undone; and checkpoints roll a conversation back."""

from __future__ import annotations

import json
import re

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot

pytestmark = pytest.mark.asyncio(loop_scope="session")

LONG = "Walk me through the tokenizer cache, the lexer and the parser error recovery. " * 5
SUMMARY = (
    "The user asked about the tokenizer cache, the lexer and parser recovery; "
    "answers covered each in turn."
)
SMALL_TRIGGER = {
    "ACDC_COMPACTION_TRIGGER_TOKENS": "500",
    "ACDC_VERBATIM_WINDOW_TOKENS": "150",
    "ACDC_SMALLER_MODEL": "acdc/fake",
    "ACDC_CHECKPOINT_EVERY": "0",
}


def past_the_trigger(hud: str) -> bool:
    """What the HUD says: "history 620 of 500 before compaction"."""
    found = re.search(r"history ([\d,]+) of ([\d,]+) before compaction", hud)
    assert found, hud
    history, trigger = (int(number.replace(",", "")) for number in found.groups())
    return history > trigger


async def send(page, text: str, answered: str) -> None:
    await page.get_by_role("textbox", name="Message").fill(text)
    await page.get_by_role("button", name="Send").click()
    log = page.get_by_role("log", name="Conversation")
    await expect(log).to_contain_text(answered, timeout=SLOW)


@pytest.mark.server_env(**SMALL_TRIGGER)
async def test_a_long_conversation_is_compacted_visibly_and_can_be_undone(server, page):
    # Chat turns get the fake's echo; the detector and the summary wait for theirs. The
    # summary takes 12 seconds, far beyond the half second after which "Compacting…" shows.
    server.script_replies(
        {"text": '{"boundary_index": null, "confidence": 0.1}', "purpose": "topic_detection"},
        {"text": SUMMARY, "chunk_size": 40, "chunk_delay": 4, "purpose": "history_summary"},
    )
    await page.goto(server.session_url)
    status = page.locator("#compaction-status")
    hud = page.get_by_role("region", name="Context")
    composer = page.locator("#composer")
    for n in range(1, 9):
        await send(page, f"Question {n}: {LONG}", f"Fake reply to: Question {n}")
        # The HUD of this turn says whether the history is now past the trigger; if it
        # is, compaction runs after this reply.
        await expect(hud).to_contain_text(re.compile(rf"\b{n} requests?\b"))
        if past_the_trigger(await hud.inner_text()):
            break
    else:
        pytest.fail("the history never passed the compaction trigger")
    await expect(status).to_have_attribute("data-state", "start", timeout=SLOW)
    await expect(status).to_contain_text("Compacting the history")
    await expect(page.get_by_role("button", name="Send")).to_be_disabled()
    during = await composer.bounding_box()
    page_height = await page.evaluate("document.documentElement.scrollHeight")
    await expect(page.get_by_role("button", name="Stop")).to_be_hidden()
    await screenshot(page, "compaction-running")

    log = page.get_by_role("log", name="Conversation")
    await expect(status).to_contain_text("History compacted (summarized)", timeout=SLOW)
    await expect(status).to_contain_text(re.compile(r"[1-9]\d* messages? replaced, [\d,]+ → "))
    folded = log.locator("details.folded")
    await expect(folded).to_contain_text(re.compile(r"\d+ earlier messages compacted"))
    await log.get_by_text("The summary the model now sees").click()
    await expect(log).to_contain_text(SUMMARY)
    await screenshot(page, "compaction-complete")

    # A reload shows the compacted view; the next turn sends the summary, not the old text.
    await page.reload()
    await expect(page.locator("details.folded")).to_have_count(1)
    # Without the status (a fresh page), the input row and the page are where they were
    # while "Compacting…" showed: the status never moves them.
    await expect(status).to_be_empty()
    assert await composer.bounding_box() == during
    assert await page.evaluate("document.documentElement.scrollHeight") == page_height
    await send(page, "And now?", "Fake reply to: And now?")

    undo = page.get_by_role("button", name="Undo compaction")
    page.once("dialog", lambda dialog: dialog.accept())
    await undo.click()
    await expect(page.locator("details.folded")).to_have_count(0, timeout=SLOW)
    await expect(page.get_by_role("log", name="Conversation")).to_contain_text("Compaction undone")
    await screenshot(page, "compaction-undone")


@pytest.mark.server_env(ACDC_RECORD_REQUESTS="{tmp}/requests.jsonl")
async def test_a_checkpoint_rolls_the_conversation_back(server, page):
    await page.goto(server.session_url)
    await send(page, "Keep the first idea", "Fake reply to: Keep the first idea")
    tools = page.get_by_role("region", name="Session tools")
    await tools.get_by_role("textbox", name="Checkpoint label").fill("first idea")
    await tools.get_by_role("button", name="Checkpoint").click()
    await expect(tools).to_contain_text("Checkpoint “first idea” saved.")
    await send(page, "A detour we regret", "Fake reply to: A detour we regret")

    page.once("dialog", lambda dialog: dialog.accept())
    await (
        tools.get_by_role("listitem")
        .filter(has_text="first idea")
        .get_by_role("button", name="Roll back")
        .click()
    )
    log = page.get_by_role("log", name="Conversation")
    await expect(log.locator("details.fold-rolled_back")).to_have_count(1, timeout=SLOW)
    await expect(log).to_contain_text("Rolled back to checkpoint “first idea”")
    before = tools.get_by_role("listitem").filter(has_text="Before rollback")
    await expect(before).to_contain_text("Auto")  # acdc took it, not the person
    await expect(before).not_to_contain_text("Manual")
    await screenshot(page, "checkpoint-rolled-back")

    await send(page, "Fresh start", "Fake reply to: Fresh start")
    last = json.loads((server.data_dir.parent / "requests.jsonl").read_text().splitlines()[-1])
    sent = json.dumps(last["messages"])
    assert "Keep the first idea" in sent and "A detour we regret" not in sent
    await page.get_by_role("link", name="History").click()
    await page.get_by_role("searchbox", name="Search history").fill("detour")
    await expect(page.get_by_role("main")).to_contain_text("A detour we regret")  # kept
