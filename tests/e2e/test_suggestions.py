"""Suggested for this message in the page: listed in the Context panel with why, the file
marked in the Files panel, removed with a click and not suggested again in the session."""

from __future__ import annotations

import json
import re

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot, send_message

pytestmark = pytest.mark.asyncio(loop_scope="session")
BILLING = (
    "LATE_RATE = 3\n\n\n"
    "def compute_late_fee(invoice):\n"
    '    """What a late invoice costs on top."""\n'
    "    penalty = invoice.days_late * LATE_RATE\n"
    "    return max(penalty, 0)\n"
)
BODY = "penalty = invoice.days_late * LATE_RATE"


def sent_for(server, text: str) -> str:
    """The whole last request the model received for the message `text`."""
    record = server.data_dir.parent / "requests.jsonl"
    for line in reversed(record.read_text().splitlines()):
        request = json.loads(line)
        if text in json.dumps(request["messages"][-1]):
            return json.dumps(request["messages"])
    raise AssertionError(f"no request for {text!r} was recorded")


@pytest.mark.own_server
@pytest.mark.server_env(ACDC_RECORD_REQUESTS="{tmp}/requests.jsonl", ACDC_SUGGEST_TOKENS="2500")
async def test_a_suggestion_is_shown_in_both_panels_and_removed_with_a_click(server, page):
    (server.repo / "src" / "billing.py").write_text(BILLING)
    await page.goto(server.session_url)
    question = "Why does compute_late_fee charge twice?"
    await send_message(page, question, answered=f"Fake reply to: {question}")
    assert BODY in sent_for(server, question)

    hud = page.get_by_role("region", name="Context")
    listed = hud.get_by_role("list", name="Suggested for this message")
    item = listed.get_by_role("listitem").filter(has_text="src/billing.py")
    await expect(item).to_contain_text("compute_late_fee", timeout=SLOW)
    await expect(item).to_contain_text(re.compile(r"matched compute_late_fee"))
    await expect(hud.get_by_role("checkbox", name="Suggest code for each message")).to_be_checked()
    await page.reload()
    row = page.locator('[data-row="src/billing.py"]')
    await expect(row.get_by_role("img", name="suggested")).to_be_visible(timeout=SLOW)
    await screenshot(page, "suggested-both-panels")
    await page.emulate_media(color_scheme="dark")
    await screenshot(page, "suggested-both-panels-dark")
    await page.emulate_media(color_scheme="light")

    hud = page.get_by_role("region", name="Context")
    await hud.get_by_role("button", name="Remove suggestion compute_late_fee").click()
    await expect(hud.get_by_role("list", name="Suggested for this message")).to_have_count(0)
    await expect(hud).to_contain_text("Nothing suggested for the last message")
    await screenshot(page, "suggested-removed")

    again = "And compute_late_fee once more?"
    await send_message(page, again, answered=f"Fake reply to: {again}")
    assert BODY not in sent_for(server, again)
    await expect(hud).to_contain_text("Nothing suggested for the last message")
