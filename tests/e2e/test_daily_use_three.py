"""Daily use, round three (issue 30): what the model wrote before a tool call reads above
the call's card, live and after a reload; each versions switcher sits where its versions
differ and folds say what made them; clearing the filter brings the whole tree back; a
new AGENTS.md is listed without a message sent; at phone width the chat comes first, the
panels fold and the header's switches stay clickable."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot, send_message

pytestmark = pytest.mark.asyncio(loop_scope="session")

READ_CALL = "read_file(path='src/app.py')"


async def _above(first, second) -> bool:
    """Whether `first` is drawn above `second` on the page."""
    a, b = await first.bounding_box(), await second.bounding_box()
    return a is not None and b is not None and a["y"] + a["height"] <= b["y"] + 1


async def test_the_text_before_a_tool_call_reads_above_its_card(server, page):
    server.script_replies(
        {
            "text": "Let me read app.py first.",
            "tool_calls": [{"name": "read_file", "arguments": {"path": "src/app.py"}}],
        },
        {"text": "It greets by name.", "chunk_size": 4, "chunk_delay": 0.05},
    )
    await page.goto(server.session_url)
    await send_message(page, "What does app.py do?", answered="It greets by name.")
    reply = page.get_by_role("article", name="acdc reply").last
    await expect(reply).to_have_attribute("data-status", "complete", timeout=SLOW)
    for _ in range(2):  # as it streamed, then as a reload draws it from the store
        before = reply.get_by_text("Let me read app.py first.")
        card = reply.get_by_role("group", name=READ_CALL)
        after = reply.get_by_text("It greets by name.")
        await expect(card).to_contain_text("done")
        assert await _above(before, card), "the text before the call is not above its card"
        assert await _above(card, after), "the answer after the call is not below its card"
        await screenshot(page, "tool-card-between-texts")
        await page.reload()


async def test_each_switcher_sits_where_its_versions_differ_and_folds_say_what_made_them(
    server, page
):
    server.script_replies(
        {"text": "Half an answer", "chunk_size": 5, "error": "server", "error_after": 1},
        "The parser reads tokens.",
        "The lexer makes tokens.",
        "The lexer splits text into tokens.",
    )
    await page.goto(server.session_url)
    log = page.get_by_role("log", name="Conversation")
    await send_message(page, "Explain the parser")
    await log.get_by_role("button", name="Retry").click()
    await expect(log).to_contain_text("The parser reads tokens.", timeout=SLOW)
    fold = log.get_by_role("group").filter(has_text="replaced by Retry")
    await expect(fold).to_have_count(1)

    # Edit & resend: a new wording of the question; the retried attempt keeps its label.
    await log.get_by_role("button", name="Edit your last message").click()
    await page.get_by_role("textbox", name="Message").fill("Explain the lexer")
    await page.get_by_role("button", name="Send", exact=True).click()
    await expect(log).to_contain_text("The lexer makes tokens.", timeout=SLOW)
    await expect(fold).to_have_count(1)
    await expect(log).not_to_contain_text("rollback")

    # Regenerate: the answers to this wording are switched under the reply.
    reply = log.get_by_role("article", name="acdc reply").last
    await reply.get_by_role("button", name="Regenerate").click(timeout=SLOW)
    await expect(log).to_contain_text("The lexer splits text into tokens.", timeout=SLOW)
    reply = log.get_by_role("article", name="acdc reply").last
    question = log.get_by_role("article", name="Your message").last
    answers = reply.get_by_role("navigation", name="Versions of this reply")
    wordings = question.get_by_role("navigation", name="Versions of this message")
    await expect(answers).to_contain_text("Version 2 of 2")
    await expect(wordings).to_contain_text("Version 2 of 2")
    await expect(question.get_by_role("navigation")).to_have_count(1)
    await expect(reply.get_by_role("navigation")).to_have_count(1)
    await screenshot(page, "versions-switchers")

    await answers.get_by_role("button", name="Previous version").click()
    await expect(log).to_contain_text("The lexer makes tokens.")
    await expect(log).to_contain_text("Explain the lexer")  # the same wording, another answer
    await wordings.get_by_role("button", name="Previous version").click()
    await expect(log).to_contain_text("The parser reads tokens.")
    await expect(log).not_to_contain_text("The lexer")


NESTED = {
    "starlette/routing.py": "def route():\n    pass\n",
    "starlette/status.py": "HTTP_200_OK = 200\n",
    "starlette/middleware/cors.py": "class CORS:\n    pass\n",
    "starlette/middleware/sessions.py": "class Sessions:\n    pass\n",
    "tests/test_routing.py": "def test_route():\n    pass\n",
    "tests/middleware/test_cors.py": "def test_cors():\n    pass\n",
    "docs/routing.md": "# Routing\n",
    "docs/status.md": "# Status codes\n",
}


async def test_clearing_the_filter_brings_the_whole_tree_back(server, page):
    for name, text in NESTED.items():
        (server.repo / name).parent.mkdir(parents=True, exist_ok=True)
        (server.repo / name).write_text(text)
    await page.goto(server.session_url)
    files = page.get_by_role("region", name="Files")
    rows = files.get_by_role("treeitem")
    deepest = files.get_by_role("checkbox", name="tests/middleware/test_cors.py", exact=True)
    await expect(deepest).to_be_visible(timeout=SLOW)  # a small repository opens fully
    whole = await rows.count()
    box = files.get_by_role("searchbox", name="Filter files")
    for _ in range(3):
        await box.press_sequentially("routing")
        await expect(files.get_by_role("checkbox", name="docs/routing.md")).to_be_visible()
        await box.press("Control+a")
        await box.press("Delete")
        await box.press_sequentially("status")
        await expect(files.get_by_role("checkbox", name="docs/status.md")).to_be_visible()
        await expect(files.get_by_role("checkbox", name="docs/routing.md")).to_be_hidden()
        await box.press("Control+a")
        await box.press("Delete")
        await expect(deepest).to_be_visible()
        await expect(rows).to_have_count(whole)


async def test_a_new_agents_md_is_listed_at_once_with_its_tokens_and_after_a_reload(server, page):
    await page.goto(server.session_url)
    await send_message(page, "Hello", answered="Fake reply to: Hello")  # a HUD is saved
    hud = page.get_by_role("region", name="Context")
    listed = hud.get_by_role("list", name="Instructions")
    await expect(listed).to_have_count(0)
    (server.repo / "AGENTS.md").write_text("# Working here\n\nRun the tests first.\n")
    entry = re.compile(r"^AGENTS\.md\s*[1-9]\d*$")
    await expect(listed.get_by_role("listitem")).to_have_text(entry)  # no message sent
    await page.reload()
    await expect(listed.get_by_role("listitem")).to_have_text(entry)
    (server.repo / "AGENTS.md").unlink()
    await expect(listed).to_have_count(0)


async def _box(locator) -> dict:
    box = await locator.bounding_box()
    assert box is not None, f"{locator} is not laid out"
    return box


async def test_at_phone_width_the_chat_comes_first_and_the_header_switches_stay_clickable(
    server, page
):
    await page.set_viewport_size({"width": 390, "height": 844})
    await page.goto(server.session_url)
    model = page.get_by_role("combobox", name="Model")
    await model.fill("openai/my-own-model")
    await model.press("Enter")
    note = page.get_by_role("status").filter(has_text="litellm does not know openai/my-own-model")
    await expect(note).to_be_visible()
    for name in ("Endless", "Auto-apply edits"):  # a covered box would refuse the click
        switch = page.get_by_role("checkbox", name=name)
        await switch.click()
        await expect(switch).to_be_checked()
        await switch.click()
        await expect(switch).not_to_be_checked()

    log = page.get_by_role("log", name="Conversation")
    box = page.get_by_role("textbox", name="Message")
    files = page.get_by_role("region", name="Files")
    message_box = await _box(box)
    assert message_box["width"] >= 300, message_box
    assert (await _box(log))["y"] < (await _box(files))["y"]
    assert message_box["y"] < (await _box(files))["y"]
    # The panels fold below the chat; each opens with its button.
    for panel, inside in (
        ("Files panel", files.get_by_role("searchbox", name="Filter files")),
        ("Context panel", page.get_by_role("region", name="Session tools")),
    ):
        fold = page.get_by_role("button", name=panel)
        await expect(fold).to_have_attribute("aria-expanded", "false")
        await expect(inside).to_be_hidden()
        await fold.click()
        await expect(fold).to_have_attribute("aria-expanded", "true")
        await expect(inside).to_be_visible()
    await screenshot(page, "phone-390-unknown-model")
    await model.fill("acdc/fake")
    await model.press("Enter")
    await expect(note).to_be_hidden()
    await send_message(page, "Hello from a phone", answered="Fake reply to: Hello from a phone")
    await screenshot(page, "phone-390")
