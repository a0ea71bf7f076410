"""A command the model proposes, answered from its card in the page (issue 32).

The scripted offline model calls `propose_command` with a harmless argv that leaves a
marker file in the work tree. The card shows the exact argv, the reason and three buttons;
the turn waits for the answer; Run once runs it (in real bubblewrap, in the server), the
card shows exit 0 and what it printed, and the model goes on; Deny runs nothing; Stop
ends the wait.
"""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot, send_message

pytestmark = pytest.mark.asyncio(loop_scope="session")

ARGV = ["sh", "-c", "echo made > marker.txt; echo 'marker <b>written</b>'"]
REASON = "to check that commands can write in the work tree"
LINE = "sh -c 'echo made > marker.txt; echo '\"'\"'marker <b>written</b>'\"'\"''"


def proposing(server) -> None:
    server.script_replies(
        {
            "text": "I would like to run one command.",
            "tool_calls": [
                {"name": "propose_command", "arguments": {"argv": ARGV, "reason": REASON}}
            ],
        },
        {"text": "Thanks for the answer."},
    )


async def the_card(page, server):
    proposing(server)
    await page.goto(server.session_url)
    await send_message(page, "Can you write a marker?")
    reply = page.get_by_role("log", name="Conversation").get_by_role("article", name="acdc reply")
    card = reply.last.get_by_role("region", name="The model asks to run a command")
    await expect(card).to_be_visible(timeout=SLOW)
    await expect(reply.last.get_by_text("waiting for you")).to_be_visible()
    await expect(page.get_by_role("button", name="Stop")).to_be_enabled()
    return reply.last, card


async def test_run_once_runs_the_proposed_command_and_the_card_shows_its_result(server, page):
    reply, card = await the_card(page, server)

    await expect(card.get_by_label("Proposed command")).to_have_text(LINE)
    await expect(card).to_contain_text("it runs a shell")
    await expect(card).to_contain_text(REASON)
    for name in ("Run once", "Always allow this exact command", "Deny"):
        await expect(card.get_by_role("button", name=name, exact=True)).to_be_enabled()
    assert not (server.repo / "marker.txt").exists()
    await _shots(page, "command-proposal")

    await card.get_by_role("button", name="Run once").click()

    await expect(card.get_by_role("status")).to_contain_text("Ran once", timeout=SLOW)
    await expect(card.get_by_role("status")).to_contain_text("exit 0 after")
    await expect(card.get_by_label("Output")).to_have_text("marker <b>written</b>\n")
    await expect(card.get_by_role("button", name="Run once")).to_have_count(0)
    assert (server.repo / "marker.txt").read_text() == "made\n"
    await expect(reply).to_contain_text("Thanks for the answer.", timeout=SLOW)  # it went on
    await expect(reply.get_by_text("What the model was told:")).to_be_visible()
    await expect(reply.locator(".tool-output").last).to_contain_text("exit status 0 after")
    await _shots(page, "command-proposal-ran")

    await page.reload()  # the page drawn from the store shows the same
    await expect(card.get_by_role("status")).to_contain_text("exit 0 after", timeout=SLOW)


async def test_deny_runs_nothing(server, page):
    reply, card = await the_card(page, server)

    await card.get_by_role("button", name="Deny").click()

    await expect(card.get_by_role("status")).to_have_text("Denied: nothing ran.", timeout=SLOW)
    for name in ("Run once", "Always allow this exact command", "Deny"):
        await expect(card.get_by_role("button", name=name, exact=True)).to_have_count(0)
    await expect(reply).to_contain_text("Thanks for the answer.", timeout=SLOW)
    assert not (server.repo / "marker.txt").exists()


async def test_stop_ends_the_wait_and_the_card_says_so(server, page):
    reply, card = await the_card(page, server)

    await page.get_by_role("button", name="Stop").click()

    await expect(card.get_by_role("status")).to_have_text(
        "Stopped before an answer: nothing ran.", timeout=SLOW
    )
    await expect(card.get_by_role("button", name="Run once")).to_have_count(0)
    await expect(reply).not_to_contain_text("Thanks for the answer.")
    assert not (server.repo / "marker.txt").exists()


async def _shots(page, name: str) -> None:
    """At 1400 px light and dark, and 390 px (a phone), then back to light."""
    await page.set_viewport_size({"width": 1400, "height": 900})
    await screenshot(page, f"{name}-light")
    toggle = page.get_by_role("button", name="Dark mode")
    await toggle.click()
    await expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    await screenshot(page, f"{name}-dark")
    await toggle.click()
    await expect(page.locator("html")).to_have_attribute("data-theme", "light")
    await page.set_viewport_size({"width": 390, "height": 844})
    await screenshot(page, f"{name}-390")
    await page.set_viewport_size({"width": 1400, "height": 900})
