"""Versions and forks in the browser: Regenerate a reply, Edit an earlier message, step
through the versions with ‹ ›, and Fork a message into a new session."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot, send_message

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_regenerate_keeps_each_reply_as_a_version_to_switch_between(server, page):
    server.script_replies("First answer.", "Second answer.", "Third answer.")
    await page.goto(server.session_url)
    log = page.get_by_role("log", name="Conversation")
    await send_message(page, "Explain the parser", answered="First answer.")
    reply = log.get_by_role("article", name="acdc reply").last
    for answer in ("Second answer.", "Third answer."):
        await reply.get_by_role("button", name="Regenerate").click()
        await expect(log).to_contain_text(answer, timeout=SLOW)
    versions = log.get_by_role("navigation", name="Versions of this reply")
    await expect(versions).to_contain_text("Version 3 of 3", timeout=SLOW)
    await expect(versions.get_by_role("button", name="Next version")).to_be_disabled()
    await expect(log.get_by_role("article", name="Your message")).to_have_count(1)

    await versions.get_by_role("button", name="Previous version").click()
    await expect(versions).to_contain_text("Version 2 of 3")
    await expect(log).to_contain_text("Second answer.")
    await expect(log).not_to_contain_text("Third answer.")
    for width, scheme in ((1400, "light"), (800, "dark")):
        await page.set_viewport_size({"width": width, "height": 860})
        await page.emulate_media(color_scheme=scheme)
        await screenshot(page, f"versions-{width}-{scheme}")
    await page.set_viewport_size({"width": 1280, "height": 860})
    await page.emulate_media(color_scheme="light")

    await page.reload()  # stored: a reload shows the same version
    await expect(versions).to_contain_text("Version 2 of 3")
    await versions.get_by_role("button", name="Previous version").focus()
    await page.keyboard.press("Enter")
    await expect(versions).to_contain_text("Version 1 of 3")
    await expect(log).to_contain_text("First answer.")
    await expect(versions.get_by_role("button", name="Previous version")).to_be_disabled()

    # History shows every version, and which one is in view.
    await page.goto(server.session_url.replace("/s/", "/history/"))
    transcript = page.get_by_role("region", name="Messages")
    await expect(transcript).to_contain_text("Version 1 of 3")
    await expect(transcript).to_contain_text("Version 3 of 3, not in view")
    await screenshot(page, "versions-history-1400")


async def test_an_earlier_message_is_edited_into_a_new_version(server, page):
    await page.goto(server.session_url)
    log = page.get_by_role("log", name="Conversation")
    box = page.get_by_role("textbox", name="Message")
    await send_message(page, "How do I greet Bob?", answered="Fake reply to: How do I greet Bob?")
    await send_message(page, "And Carol?", answered="Fake reply to: And Carol?")
    first = log.get_by_role("article", name="Your message").first
    await first.get_by_role("button", name="Edit this message").click()
    await expect(box).to_have_value("How do I greet Bob?")
    await expect(
        page.get_by_role("status").filter(has_text="Editing an earlier message")
    ).to_be_visible()
    await box.fill("How do I greet Alice?")
    await page.get_by_role("button", name="Send", exact=True).click()
    await expect(log).to_contain_text("Fake reply to: How do I greet Alice?", timeout=SLOW)
    versions = log.get_by_role("navigation", name="Versions of this message")
    await expect(versions).to_contain_text("Version 2 of 2", timeout=SLOW)
    await expect(log).not_to_contain_text("And Carol?")
    await page.set_viewport_size({"width": 800, "height": 860})
    await page.emulate_media(color_scheme="dark")
    await screenshot(page, "versions-edited-800-dark")
    await page.set_viewport_size({"width": 1280, "height": 860})
    await page.emulate_media(color_scheme="light")

    await versions.get_by_role("button", name="Previous version").click()
    await expect(versions).to_contain_text("Version 1 of 2")
    await expect(log).to_contain_text("And Carol?")
    await expect(log).not_to_contain_text("Alice")


async def test_fork_opens_a_new_session_with_the_history_up_to_the_message(server, page):
    await page.goto(server.session_url)
    log = page.get_by_role("log", name="Conversation")
    await send_message(page, "How do I greet Bob?", answered="Fake reply to: How do I greet Bob?")
    await send_message(page, "And Carol?", answered="Fake reply to: And Carol?")
    mine = log.get_by_role("article", name="Your message")
    await expect(mine.get_by_role("button", name="Fork from this message")).to_have_count(2)
    first_reply = log.get_by_role("article", name="acdc reply").first
    await first_reply.get_by_role("button", name="Fork from this message").click()

    await expect(page).not_to_have_url(server.session_url, timeout=SLOW)
    await expect(page).to_have_url(re.compile(r"/s/[^/]+/$"))
    await expect(log).to_contain_text("Fake reply to: How do I greet Bob?")
    await expect(log).not_to_contain_text("And Carol?")
    await send_message(page, "And Dave?", answered="Fake reply to: And Dave?")
    await page.go_back()
    await expect(log).to_contain_text("And Carol?")  # the parent is as it was
