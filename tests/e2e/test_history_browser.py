"""A person finds an earlier conversation: History, search with a marked snippet, load it."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def _chat(page, text: str) -> None:
    await page.get_by_role("textbox", name="Message").fill(text)
    await page.get_by_role("button", name="Send").click()
    log = page.get_by_role("log", name="Conversation")
    await expect(log).to_contain_text(f"Fake reply to: {text}", timeout=SLOW)


@pytest.mark.own_server  # it ends with the history empty
async def test_a_word_from_an_old_message_finds_it_and_loads_it_back(server, page):
    await page.goto(server.session_url)
    await expect(page.get_by_role("button", name="Send")).to_be_enabled(timeout=SLOW)
    await _chat(page, "Where does the tokenizer split camelCase words?")
    await _chat(page, "And what about snake_case?")
    chat_url = page.url

    await page.get_by_role("link", name="History").click()
    await expect(page).to_have_url(re.compile(r"/history/$"))
    await expect(
        page.get_by_role("link", name=re.compile("Where does the tokenizer"))
    ).to_be_visible()
    await expect(page.get_by_text("4 messages")).to_be_visible()
    await screenshot(page, "history-list")

    await page.get_by_role("searchbox", name="Search history").fill("tokenizer")
    hits = page.get_by_role("list", name="Matching messages")
    await expect(hits.locator("mark").first).to_have_text(re.compile("tokenizer", re.I))
    await expect(hits.get_by_role("listitem")).to_have_count(2)
    await screenshot(page, "history-search")

    await hits.get_by_role("link").first.click()
    await expect(page.get_by_role("heading", level=1)).to_contain_text("Where does the tokenizer")
    await expect(page.get_by_role("region", name="Messages")).to_contain_text("snake_case")

    await page.get_by_role("textbox", name="Session title").fill("Tokenizer notes")
    await page.get_by_role("button", name="Rename").click()
    await expect(page.get_by_role("heading", level=1)).to_have_text("Tokenizer notes")
    await screenshot(page, "history-session")

    await page.get_by_role("button", name="Load into chat").click()
    await expect(page).to_have_url(chat_url)
    log = page.get_by_role("log", name="Conversation")
    await expect(log).to_contain_text("Fake reply to: And what about snake_case?")
    await screenshot(page, "history-loaded")

    await page.get_by_role("link", name="History").click()
    await page.get_by_role("link", name="Tokenizer notes").click()
    await page.get_by_role("link", name="Delete").click()
    await expect(page.get_by_role("heading", name="Delete this session?")).to_be_visible()
    await screenshot(page, "history-confirm-delete")
    await page.get_by_role("button", name="Delete session").click()
    await expect(page).to_have_url(re.compile(r"/history/$"))
    await expect(page.get_by_text("No sessions yet.")).to_be_visible()


async def test_a_query_of_only_syntax_characters_and_an_unknown_session_are_handled(server, page):
    await page.goto(server.url + "history/")
    await page.get_by_role("searchbox", name="Search history").fill('"(( NEAR *')
    await expect(page.get_by_role("list", name="Matching messages")).to_contain_text(
        "No messages match"
    )
    response = await page.goto(server.url + "history/sess_0_000000/")
    assert response.status == 404
    await expect(page.get_by_role("heading", name="No such session")).to_be_visible()


async def test_part_of_a_word_finds_its_message_ranked_after_whole_words(server, page):
    await page.goto(server.session_url)
    await expect(page.get_by_role("button", name="Send")).to_be_enabled(timeout=SLOW)
    # Not a suffix PostgreSQL's English stemmer would strip ("Qxtokenization" stems to the
    # word itself there): the word is only inside the longer one.
    await _chat(page, "Why is Preqxtoken slow in parse_qxframe?")
    await _chat(page, "Is qxtoken the word?")

    await page.get_by_role("link", name="History").click()
    search = page.get_by_role("searchbox", name="Search history")
    hits = page.get_by_role("list", name="Matching messages").get_by_role("listitem")
    await search.fill("QXTOKEN")
    # Each message and its fake reply: the whole word twice, then the part of a word twice.
    await expect(hits).to_have_count(4)
    await expect(hits.nth(0)).to_contain_text("Is qxtoken the word?")
    await expect(hits.nth(1)).not_to_contain_text("inside a word")
    await expect(hits.nth(3)).to_contain_text("Why is Preqxtoken slow")
    await expect(hits.nth(3)).to_contain_text("inside a word")
    await expect(hits.nth(3).locator("mark")).to_have_text(["qxtoken"])
    await screenshot(page, "history-search-ranked-substring")

    await search.fill("e_qxfr")
    await expect(hits).to_have_count(2)
    await expect(hits.locator("mark")).to_have_text(["e_qxfr", "e_qxfr"])
