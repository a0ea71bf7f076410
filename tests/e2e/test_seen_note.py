"""A reply's "What the model saw" note, in the browser (issue 12 item 9).

With related context on, the reply names what it was offered besides the history: here
a message pinned in an earlier session, with its source and relevance. With Endless mode
on, it shows the managed summary the model saw instead of the earlier history, and the
template that wrote it. The note is folded until opened, and the same after a reload.
"""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot, send_message

pytestmark = pytest.mark.asyncio(loop_scope="session")

FACT = "The quillwort cache is keyed by content hash, never by path."


async def _send_and_wait(page, text: str) -> None:
    await send_message(page, text, f"Fake reply to: {text}")


async def test_a_reply_shows_the_related_context_it_saw_and_keeps_it_after_reload(server, page):
    await page.goto(server.session_url)
    await _send_and_wait(page, FACT)
    question = page.get_by_role("article", name="Your message").filter(has_text=FACT)
    await question.get_by_role("button", name="Pin message").click()
    await expect(question.get_by_role("button", name="Unpin message")).to_be_visible()
    earlier = server.session_url

    await page.get_by_role("button", name="New session").click()
    await expect(page).not_to_have_url(earlier)
    tools = page.get_by_role("region", name="Session tools")
    await tools.get_by_role("checkbox", name="Related context from earlier sessions").check()
    await expect(tools.get_by_role("status")).to_have_text("Related context is on.")
    await _send_and_wait(page, "How is the quillwort cache keyed?")

    reply = page.get_by_role("article", name="acdc reply").last
    note = reply.get_by_role("group", name="What the model saw")
    await expect(note).to_be_visible()
    related = note.get_by_role("region", name="Related context")
    await expect(related).to_be_hidden()  # folded until asked for
    await note.get_by_text("What the model saw").click()
    await expect(related).to_contain_text(FACT)
    await expect(related).to_contain_text("Pinned note from")
    await expect(related).to_contain_text("relevance")
    earlier_id = earlier.rstrip("/").rsplit("/", 1)[-1]
    source = related.get_by_role("link", name=FACT)  # the earlier session, by its title
    await expect(source).to_have_attribute("href", f"/history/{earlier_id}/")
    for width in (1400, 800):
        await page.set_viewport_size({"width": width, "height": 900})
        await screenshot(page, f"seen-note-related-{width}")

    await page.reload()
    reply = page.get_by_role("article", name="acdc reply").last
    note = reply.get_by_role("group", name="What the model saw")
    await expect(note).to_be_visible()
    await note.get_by_text("What the model saw").click()
    await expect(note.get_by_role("region", name="Related context")).to_contain_text(FACT)


@pytest.mark.server_env(ACDC_SMALLER_MODEL="acdc/fake", ACDC_ENDLESS_PASSTHROUGH_RUNS="1")
async def test_an_endless_reply_shows_the_managed_summary_it_saw_instead(server, page):
    await page.goto(server.session_url)
    for n in (1, 2):
        await _send_and_wait(page, f"Plain question {n}")
    endless = page.get_by_role("checkbox", name="Endless")
    await endless.check()
    await expect(page.get_by_role("combobox", name="Context template")).to_be_enabled()
    server.script_replies(
        {"text": "- Instructions: answer in one line", "purpose": "managed_view"},
        {"text": "Managed answer."},
    )
    send = page.get_by_role("button", name="Send", exact=True)
    await page.get_by_role("textbox", name="Message").fill("And now?")
    await send.click()
    reply = page.get_by_role("article", name="acdc reply").filter(has_text="Managed answer.")
    await expect(reply).to_be_visible(timeout=SLOW)
    note = reply.get_by_role("group", name="What the model saw")
    await note.get_by_text("What the model saw").click()
    summary = note.get_by_role("region", name="Managed summary")
    await expect(summary).to_contain_text("answer in one line")
    await expect(summary).to_contain_text("template default (built in)")
    earlier = page.get_by_role("article", name="acdc reply").filter(has_text="Plain question 1")
    await expect(earlier.get_by_role("group", name="What the model saw")).to_have_count(0)
    await page.emulate_media(color_scheme="dark")
    for width in (1400, 800):
        await page.set_viewport_size({"width": width, "height": 900})
        await screenshot(page, f"seen-note-endless-dark-{width}")

    await page.reload()
    reply = page.get_by_role("article", name="acdc reply").filter(has_text="Managed answer.")
    note = reply.get_by_role("group", name="What the model saw")
    await note.get_by_text("What the model saw").click()
    await expect(note.get_by_role("region", name="Managed summary")).to_contain_text(
        "answer in one line"
    )
