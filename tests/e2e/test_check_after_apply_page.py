"""Check after applying edits, in the page: a command declared in Session tools → Commands
is chosen as the check, Auto-apply is on, the model's edit is written and the check runs
(real bubblewrap); it fails, its output goes back to the model once, the fix is written and
the check runs again and passes. Both runs show in the conversation."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import screenshot, send_message
from tests.e2e.test_command_cards import declare

pytestmark = [
    pytest.mark.asyncio(loop_scope="session"),
    pytest.mark.server_env(ACDC_EDITS="1"),
    pytest.mark.own_server,  # its declaration and check must not reach other tests' sessions
]
SLOW = 60_000  # a sandboxed run and a second turn on a busy machine
BROKEN = "def add(a, b):\n    return a - b\n"
CHECK = 'from calc import add\n\nassert add(2, 3) == 5, f"add(2, 3) gave {add(2, 3)}"\n'


def edit(old: str, new: str) -> dict:
    return {"name": "edit_file", "arguments": {"path": "calc.py", "old_text": old, "new_text": new}}


async def test_a_failed_check_goes_back_once_and_the_fix_passes(server, page):
    (server.repo / "calc.py").write_text(BROKEN)
    (server.repo / "check.py").write_text(CHECK)
    await page.set_viewport_size({"width": 1400, "height": 900})
    # Declared as `acdc commands add` does (the page's form has its own test): the part is
    # drawn once with it, so the choice below is not made on a part about to be redrawn.
    declare(server, "test", ["python3", "-B", "check.py"])
    await page.goto(server.session_url)
    part = page.get_by_role("region", name="Commands")
    await expect(part.get_by_role("list", name="Declared commands")).to_contain_text(
        "python3 -B check.py"
    )
    await part.get_by_label("Check after applying edits").select_option("test")
    await expect(part.get_by_role("status")).to_contain_text("After edits apply, test runs.")
    await page.get_by_role("checkbox", name="Auto-apply edits").check()
    await expect(page.get_by_role("checkbox", name="Auto-apply edits")).to_be_checked()

    server.script_replies(
        {"tool_calls": [edit("a - b", "a + a")]},
        {"text": "Changed the sum."},
        {"tool_calls": [edit("a + a", "a + b")]},
        {"text": "Fixed the sum."},
    )
    await send_message(page, "Make add() add", "Changed the sum.")
    conversation = page.get_by_role("log")
    await expect(conversation).to_contain_text("add(2, 3) gave 4", timeout=SLOW)
    await expect(conversation).to_contain_text("Fixed the sum.", timeout=SLOW)
    await expect(conversation).to_contain_text(re.compile(r"exit status 0"), timeout=SLOW)
    assert (server.repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    await screenshot(page, "check-after-apply-1400-light")
