"""A command the model proposes, answered from its card in the page (issue 32).

The scripted offline model calls `propose_command` with a harmless argv that leaves a
marker file in the work tree. The card shows the exact argv, the reason and three buttons;
the turn waits for the answer; Run once runs it (in real bubblewrap, in the server), the
card shows exit 0 and what it printed, and the model goes on; Deny runs nothing; Stop
ends the wait.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import uuid

import pytest
from playwright.async_api import expect

from tests.chat.repo.commands_support import PYTHON, pids_with, wait_until_gone
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


async def test_stop_kills_a_run_the_person_started_from_the_card(server, page):
    word = f"acdc-e2e-card-{uuid.uuid4().hex}"
    argv = ["sh", "-c", f"{PYTHON} -c 'import time; time.sleep(1000)' {word} & wait"]
    server.script_replies(
        {
            "tool_calls": [
                {"name": "propose_command", "arguments": {"argv": argv, "reason": "a server"}}
            ]
        },
        {"text": "Thanks for the answer."},
    )
    await page.goto(server.session_url)
    await send_message(page, "Start a server")
    reply = page.get_by_role("log", name="Conversation").get_by_role("article", name="acdc reply")
    card = reply.last.get_by_role("region", name="The model asks to run a command")
    await card.get_by_role("button", name="Run once").click(timeout=SLOW)
    async with asyncio.timeout(SLOW / 1000):
        while not pids_with(word):
            await asyncio.sleep(0.05)

    await page.get_by_role("button", name="Stop").click()

    assert await asyncio.to_thread(wait_until_gone, word) == []
    await expect(card.get_by_role("status")).to_contain_text(
        "stopped with Stop after", timeout=SLOW
    )


def declare(server, name: str, argv: list[str]) -> None:
    """`acdc commands add` for the server's repository, as the person would."""
    environ = {**os.environ, "ACDC_REPO": str(server.repo), "ACDC_DATA_DIR": str(server.data_dir)}
    done = subprocess.run(
        [sys.executable, "-m", "acdc", "commands", "add", name, "--", *argv],
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


async def test_a_running_command_streams_into_its_card_and_stop_kills_it(server, page):
    word = f"acdc-e2e-{uuid.uuid4().hex}"
    printed = r"printf '\033[32mgreen line\033[0m <i>as text</i>\n'"
    sleeper = f"{PYTHON} -c 'import time; time.sleep(1000)' {word}"
    declare(server, "slow", ["sh", "-c", f"{printed}; {sleeper}"])
    server.script_replies(
        {"tool_calls": [{"name": "run_command", "arguments": {"name": "slow"}}]},
        {"text": "It ended."},
    )
    await page.goto(server.session_url)
    await send_message(page, "Run the slow one")

    reply = page.get_by_role("log", name="Conversation").get_by_role("article", name="acdc reply")
    output = reply.last.get_by_label("Output so far")
    await expect(output).to_contain_text("green line <i>as text</i>", timeout=SLOW)
    await expect(output.locator(".ansi32")).to_have_text("green line")
    async with asyncio.timeout(SLOW / 1000):
        while not pids_with(word):
            await asyncio.sleep(0.05)
    await _shots(page, "command-live")

    await page.get_by_role("button", name="Stop").click()

    await expect(reply.last).to_have_attribute("data-status", re.compile("."), timeout=SLOW)
    assert await asyncio.to_thread(wait_until_gone, word) == []
    await expect(reply.last).not_to_contain_text("It ended.")
    card = reply.last.get_by_role("group", name="run_command(…)")
    await expect(card.locator(".tool-status")).to_have_text("failed")  # no spinner left
    await expect(card).to_contain_text("Stopped: the run was killed with the turn (Stop).")


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


async def test_a_finished_run_s_card_draws_its_colours_after_a_reload_too(server, page):
    mocha = (
        r"printf '\033[32m  ✔\033[0m\033[90m sends the body\033[0m\n"
        r"\033[92m \033[0m\033[32m 1 passing\033[0m\033[90m (4ms)\033[0m\n"
        r"\033[31m  1 failing\033[0m\n\n  1) res\n       should set ETag:\n"
        r"\033[31m     Error: expected 200, got 500\033[0m\n'; exit 1"
    )
    declare(server, "mocha", ["sh", "-c", mocha])
    server.script_replies(
        {"tool_calls": [{"name": "run_command", "arguments": {"name": "mocha"}}]},
        {"text": "One test fails."},
    )
    await page.goto(server.session_url)
    await send_message(page, "Run the tests", answered="One test fails.")

    for reloaded in (False, True):
        reply = page.get_by_role("log", name="Conversation").get_by_role("article")
        output = reply.last.locator(".tool-card .tool-output").last
        await expect(output).to_contain_text("1 failing", timeout=SLOW)
        await expect(output.locator(".ansi32").first).to_have_text("  ✔")
        await expect(output.locator(".ansi31").last).to_have_text(
            "     Error: expected 200, got 500"
        )
        assert "\x1b" not in await output.inner_text() and "␛" not in await output.inner_text()
        if not reloaded:
            await reply.last.locator(".tool-card > summary").last.click()
            await _shots(page, "command-colours")
            await page.reload()
