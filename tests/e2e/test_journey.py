"""One person's session from start to finish, failing on any console error or page error.

Send, stream and stop; attach an image; compaction; a checkpoint and its rollback; a model
switch; reload; History with a search (typed, then Enter) and a transcript; dark mode. Then,
in a repository with project instructions: instructions off and on, an @-mention, a reply
regenerated and switched back, and a fork. Each step waits on what the page shows; the
console and uncaught errors are collected from the first page load to the end, across
every page the journey visits.
"""

from __future__ import annotations

import io
import re

import pytest
from PIL import Image as PILImage
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot, send_message

pytestmark = pytest.mark.asyncio(loop_scope="session")

LONG = "Walk me through the tokenizer cache, the lexer and the parser error recovery. " * 5
SLOW_REPLY = {
    "text": " ".join(f"word{n}" for n in range(300)),
    "chunk_size": 10,
    "chunk_delay": 0.05,
}
SUMMARY = "The user asked about the tokenizer cache, the lexer and parser recovery."
SMALL_TRIGGER = {  # as tests/e2e/test_compaction_journey.py, so the two share a server
    "ACDC_COMPACTION_TRIGGER_TOKENS": "500",
    "ACDC_VERBATIM_WINDOW_TOKENS": "150",
    "ACDC_SMALLER_MODEL": "acdc/fake",
    "ACDC_CHECKPOINT_EVERY": "0",
}


def _png() -> bytes:
    out = io.BytesIO()
    PILImage.new("RGB", (120, 80), (0, 128, 128)).save(out, format="PNG")
    return out.getvalue()


def _collect_errors(page) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(f"console: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
    return errors


@pytest.mark.server_env(**SMALL_TRIGGER)
async def test_a_whole_session_runs_without_a_console_error(server, page):
    errors = _collect_errors(page)
    server.script_replies(
        SLOW_REPLY,
        {"text": '{"boundary_index": null, "confidence": 0.1}', "purpose": "topic_detection"},
        {"text": SUMMARY, "purpose": "history_summary"},
    )
    await page.goto(server.session_url)
    log = page.get_by_role("log", name="Conversation")
    box = page.get_by_role("textbox", name="Message")

    # Send, stream, stop.
    await send_message(page, "Tell me a long story", "word1")
    await page.get_by_role("button", name="Stop", exact=True).click()
    await expect(log.get_by_text("Stopped", exact=True)).to_be_visible(timeout=SLOW)

    # Attach an image and send it.
    image = {"name": "teal.png", "mimeType": "image/png", "buffer": _png()}
    await page.get_by_label("Attach image").set_input_files(files=[image])
    tray = page.get_by_role("group", name="Pending attachments")
    await expect(tray.get_by_role("img", name="Pending image 120×80")).to_be_visible()
    await send_message(page, "What colour is this?", "Fake reply to: What colour is this?")
    await expect(log.get_by_role("img", name="Attached image 1")).to_be_visible()

    # Long turns until the history is compacted. The compaction runs after a turn and
    # holds the next one; its status line clears as that turn starts, so the conversation's
    # own note and fold are what is looked for.
    folded = log.locator("details.folded")
    for n in range(1, 10):
        await send_message(page, f"Question {n}: {LONG}", f"Fake reply to: Question {n}")
        if await folded.count():
            break
    await expect(log).to_contain_text("History compacted (summarized)", timeout=SLOW)
    await expect(folded).to_have_count(1)

    # A checkpoint, a detour, the rollback.
    tools = page.get_by_role("region", name="Session tools")
    await tools.get_by_role("textbox", name="Checkpoint label").fill("journey")
    await tools.get_by_role("button", name="Checkpoint").click()
    await expect(tools).to_contain_text("Checkpoint “journey” saved.")
    await send_message(page, "A detour we regret", "Fake reply to: A detour we regret")
    page.once("dialog", lambda dialog: dialog.accept())
    checkpoint = tools.get_by_role("listitem").filter(has_text="journey")
    await checkpoint.get_by_role("button", name="Roll back").click()
    await expect(log).to_contain_text("Rolled back to checkpoint “journey”", timeout=SLOW)

    # Switch the model; the next message goes to it.
    chooser = page.get_by_role("combobox", name="Model")
    await chooser.fill("acdc/dry-run")
    await chooser.press("Enter")
    await expect(page.get_by_role("status").filter(has_text="Takes effect")).to_be_visible()
    await send_message(page, "What would you see?", "Dry run: nothing was sent to a model")

    # Reload: everything is still there.
    await page.reload()
    await expect(log).to_contain_text("Dry run: nothing was sent to a model")
    await expect(chooser).to_have_value("acdc/dry-run")
    await expect(box).to_be_editable()

    # History: search by typing, then by Enter; open the transcript.
    await page.get_by_role("link", name="History").click()
    search = page.get_by_role("searchbox", name="Search history")
    await search.fill("colour")
    hits = page.get_by_role("list", name="Matching messages")
    await expect(hits.locator("mark").first).to_have_text(re.compile("colour", re.I))
    # Enter straight after typing: the typed search (delayed) and the form's submit queue
    # behind each other under hx-sync instead of one aborting the other.
    async with page.expect_response(lambda r: "/history/search/" in r.url) as answered:
        await search.fill("detour")
        await search.press("Enter")
    assert (await answered.value).ok
    await expect(hits).to_contain_text("A detour we regret")
    await (
        page.get_by_role("link", name="History", exact=True)
        .or_(page.get_by_role("link", name="Back to chat"))
        .first.click()
    )
    await expect(page).to_have_url(server.session_url)
    await page.get_by_role("link", name="History").click()
    await page.get_by_role("link", name="Tell me a long story").first.click()
    await expect(page.get_by_role("region", name="Messages")).to_contain_text("word1")

    # Dark mode, on History and back in the chat.
    toggle = page.get_by_role("button", name="Dark mode")
    await toggle.click()
    await expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    await page.goto(server.session_url)
    await expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    await send_message(page, "Last one, in the dark", "Dry run: nothing was sent to a model")
    await screenshot(page, "journey-end-dark")

    assert errors == [], "\n".join(errors)


# A server of its own: the instructions file would otherwise reach other tests' prompts.
@pytest.mark.server_env(ACDC_INSTRUCTIONS="first")
async def test_versions_a_fork_a_mention_and_instructions_without_a_console_error(server, page):
    errors = _collect_errors(page)
    (server.repo / "AGENTS.md").write_text("# Working here\n\nRun the tests first.\n")
    (server.repo / "src").mkdir(exist_ok=True)
    (server.repo / "src" / "journey_utils.py").write_text("def slugify(text):\n    return text\n")
    server.script_replies("First answer.", "Second answer.")
    await page.goto(server.session_url)
    log = page.get_by_role("log", name="Conversation")
    box = page.get_by_role("textbox", name="Message")
    files = page.get_by_role("region", name="Files")
    hud = page.get_by_role("region", name="Context")
    listed = hud.get_by_role("list", name="Instructions")

    # The project instructions: listed before anything is sent, switched off.
    switch = hud.get_by_role("checkbox", name="Send project instructions")
    await expect(listed).to_contain_text("AGENTS.md")
    await switch.uncheck()
    await expect(listed).to_contain_text("off for this session")

    # An @-mention chosen by keyboard, sent with its chip.
    await expect(files.get_by_role("checkbox", name="src/journey_utils.py")).to_be_visible()
    await expect(page.get_by_role("button", name="Send", exact=True)).to_be_enabled(timeout=SLOW)
    await box.press_sequentially("Explain @journey_ut")
    choices = page.get_by_role("listbox", name="Files and symbols to mention")
    option = choices.get_by_role("option", name="src/journey_utils.py", exact=True)
    await expect(option).to_have_attribute("aria-selected", "true")
    await box.press("Enter")
    await expect(files.get_by_role("checkbox", name="src/journey_utils.py")).to_be_checked()
    await box.press_sequentially("please")
    await box.press("Enter")
    await expect(log).to_contain_text("First answer.", timeout=SLOW)
    sent = log.get_by_role("article", name="Your message").last
    await expect(sent.get_by_role("list", name="Mentioned")).to_contain_text(
        "@src/journey_utils.py"
    )

    # Regenerate the reply, then switch back to the first version.
    await (
        log.get_by_role("article", name="acdc reply")
        .last.get_by_role("button", name="Regenerate")
        .click()
    )
    await expect(log).to_contain_text("Second answer.", timeout=SLOW)
    versions = log.get_by_role("navigation", name="Versions of this reply")
    await expect(versions).to_contain_text("Version 2 of 2", timeout=SLOW)
    await versions.get_by_role("button", name="Previous version").click()
    await expect(versions).to_contain_text("Version 1 of 2")
    await expect(log).to_contain_text("First answer.")

    # Instructions back on; fork the reply shown into a new session and go on there.
    await switch.check()
    await expect(listed).to_contain_text(re.compile(r"AGENTS\.md\s*\d+"), timeout=SLOW)
    await (
        log.get_by_role("article", name="acdc reply")
        .last.get_by_role("button", name="Fork from this message")
        .click()
    )
    await expect(page).not_to_have_url(server.session_url, timeout=SLOW)
    await expect(log).to_contain_text("First answer.")
    await send_message(page, "And in the fork?", answered="Fake reply to: And in the fork?")
    await screenshot(page, "journey-versions-fork")

    assert errors == [], "\n".join(errors)
