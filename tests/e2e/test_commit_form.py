"""The commit form in Session tools, as a person meets it after accepting the model's edit
(it appears as Accept is pressed, without a reload): a message field as wide as the card,
a message proposed from what changed (the reply's summary line, never the person's chat
line with its `[sr]`), and a commit of acdc's file only. Then a hook the session's edit
changed: named, with two ways to go."""

from __future__ import annotations

import subprocess

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot, send_message

pytestmark = [
    pytest.mark.asyncio(loop_scope="session"),
    pytest.mark.server_env(ACDC_EDITS="1"),
    pytest.mark.own_server,  # it commits the repository and sets its hooks folder
]
REPLY = "## Make the greeting warmer\n\nThe greeting now says hi, with an exclamation mark."


def git(repo, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def edit_call(path: str, old: str, new: str) -> dict:
    return {"name": "edit_file", "arguments": {"path": path, "old_text": old, "new_text": new}}


async def accept_reply_edits(page, server, path: str, old: str, new: str, asked: str) -> None:
    server.script_replies({"tool_calls": [edit_call(path, old, new)]}, {"text": REPLY})
    await send_message(page, asked, "The greeting now says hi")
    card = page.get_by_role("region", name=path)
    await card.get_by_role("button", name=f"Accept {path}").click()
    await expect(card).to_contain_text("Applied", timeout=SLOW)
    # No reload: Accept's frame brings the form to Session tools (issue 42, item 5).


async def test_the_commit_form_proposes_from_what_changed_in_a_wide_field(server, page):
    for setting in (("user.email", "dev@example.com"), ("user.name", "Dev")):
        git(server.repo, "config", *setting)
    git(server.repo, "add", "-A")
    git(server.repo, "commit", "-qm", "start")
    (server.repo / "README.md").write_text("# My own change\n")  # the person's, not acdc's
    await page.set_viewport_size({"width": 1400, "height": 900})
    await page.goto(server.session_url)
    asked = "[sr] make @src/app.py greet warmer"
    await accept_reply_edits(page, server, "src/app.py", "f'hello {name}'", "f'hi {name}!'", asked)

    form = page.get_by_role("region", name="Commit acdc's changes")
    field = form.get_by_role("textbox", name="Describe the commit")
    await expect(field).to_have_value("Make the greeting warmer")
    await expect(form).to_contain_text("Files acdc changed in this session: src/app.py")
    card = await page.get_by_role("region", name="Session tools").bounding_box()
    box = await field.bounding_box()
    assert box["width"] >= 0.8 * card["width"] and box["width"] > 200, (box, card)
    await form.scroll_into_view_if_needed()
    await screenshot(page, "commit-form-1400-light")

    await form.get_by_role("button", name="Commit changed files").click()
    await expect(form.get_by_role("status")).to_contain_text("Committed 1 file(s)")
    assert git(server.repo, "log", "-1", "--format=%s") == "Make the greeting warmer\n"
    assert git(server.repo, "status", "--porcelain") == " M README.md\n"


async def test_a_hook_the_session_changed_is_named_with_two_ways_to_go(server, page):
    for setting in (("user.email", "dev@example.com"), ("user.name", "Dev"),
                    ("core.hooksPath", ".githooks")):  # fmt: skip
        git(server.repo, *("config", *setting))
    hook = server.repo / ".githooks" / "pre-commit"
    hook.parent.mkdir()
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(0o755)
    git(server.repo, "add", "-A")
    git(server.repo, "commit", "-qm", "start")
    await page.set_viewport_size({"width": 390, "height": 844})
    await page.emulate_media(color_scheme="dark")
    await page.goto(server.session_url)
    path = ".githooks/pre-commit"
    await accept_reply_edits(page, server, path, "exit 0", "touch hook-ran", "change the hook")
    await page.get_by_role("button", name="Context panel").click()  # folded at phone width

    form = page.get_by_role("region", name="Commit acdc's changes")
    await expect(form).to_contain_text(f"changed {path}, which git runs when you commit")
    await expect(form.get_by_role("button", name="Commit changed files")).to_have_count(0)
    run = form.get_by_role("button", name="Commit and run the changed hook")
    await expect(run).to_be_visible()
    field = await form.get_by_role("textbox", name="Describe the commit").bounding_box()
    card = await page.get_by_role("region", name="Session tools").bounding_box()
    assert field["width"] >= 0.8 * card["width"], (field, card)
    await form.scroll_into_view_if_needed()
    await screenshot(page, "commit-form-hook-390-dark")

    await form.get_by_role("button", name="Commit without hooks").click()
    await expect(form.get_by_role("status")).to_contain_text("(no hook ran)")
    assert not (server.repo / "hook-ran").exists()
    assert git(server.repo, "log", "-1", "--format=%s") == "Make the greeting warmer\n"
