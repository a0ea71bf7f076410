"""The edits a person can trust, as they go through them: a reply whose edits cannot all
apply is shown whole and Accept all writes nothing; the automatic retry is shown; Undo and
Apply again; a conflict card shows the lines where the file moved, with real line numbers;
Auto-apply waits for a protected file."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot, send_message

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.server_env(ACDC_EDITS="1")]
APP = "def greet(name):\n    return f'hello {name}'\n"
CONFIG = "".join(f"SETTING_{n} = {n}\n" for n in range(1, 31))


def block(path: str, old: str, new: str) -> str:
    return f"{path}\n```python\n<<<<<<< SEARCH\n{old}\n=======\n{new}\n>>>>>>> REPLACE\n```\n"


def edit_call(path: str, old: str, new: str) -> dict:
    return {"name": "edit_file", "arguments": {"path": path, "old_text": old, "new_text": new}}


async def test_a_reply_that_cannot_apply_whole_writes_nothing_and_shows_why(server, page):
    (server.repo / "src" / "config.py").write_text(CONFIG)
    good = block("src/config.py", "SETTING_2 = 2", "SETTING_2 = 200")
    bad = block("src/app.py", "    return f'howdy {name}'", "    return f'hi {name}'")
    server.script_replies({"text": "Two changes.\n\n" + good + bad}, {"text": "Sorry.\n\n" + bad})
    await page.goto(server.session_url)
    await send_message(page, "Raise a setting and greet warmly", "Sorry.")

    config = page.get_by_role("region", name="src/config.py")
    app = page.get_by_role("region", name="src/app.py")
    await expect(config).to_contain_text("Pending review", timeout=SLOW)
    await expect(app).to_contain_text("Failed")  # shown before the person decides
    await expect(app).to_contain_text("the old text was not found")
    await expect(app.get_by_text("The closest lines in the file now")).to_be_visible()
    retried = app.get_by_text("Automatic retry: 1 failed edit of this file sent back to the model")
    await expect(retried).to_be_visible()  # and its new edit failed too: it stands
    await expect(page.get_by_role("note").filter(has_text="cannot apply")).to_be_visible()
    await page.get_by_role("button", name="Accept all edits").click()
    alert = page.get_by_role("alert").filter(has_text="Nothing was written")
    await expect(alert).to_be_visible()
    assert (server.repo / "src" / "config.py").read_text() == CONFIG
    assert (server.repo / "src" / "app.py").read_text() == APP
    await page.get_by_role("region", name="Proposed edits").scroll_into_view_if_needed()
    await screenshot(page, "edits-partial-reply-light")

    # The person takes the part that applies, file by file; then undoes and applies again.
    await config.get_by_role("button", name="Accept src/config.py").click()
    await expect(config).to_contain_text("Applied")
    assert "SETTING_2 = 200\n" in (server.repo / "src" / "config.py").read_text()
    await config.get_by_role("button", name="Undo src/config.py").click()
    await expect(config).to_contain_text("Undone")
    assert (server.repo / "src" / "config.py").read_text() == CONFIG
    await config.get_by_role("button", name="Apply src/config.py again").click()
    await expect(config).to_contain_text("Applied")
    assert "SETTING_2 = 200\n" in (server.repo / "src" / "config.py").read_text()


async def test_the_retry_is_shown_and_a_conflict_names_the_lines_where_the_file_moved(server, page):
    (server.repo / "src" / "config.py").write_text(CONFIG)
    wrong = block("src/app.py", "    return f'howdy {name}'", "    return f'hi {name}'")
    right = block("src/app.py", "    return f'hello {name}'", "    return f'hi {name}'")
    server.script_replies({"text": "First.\n\n" + wrong}, {"text": "Fixed.\n\n" + right})
    await page.goto(server.session_url)
    await send_message(page, "Greet with hi", "Fixed.")
    app = page.get_by_role("region", name="src/app.py")
    await expect(app).to_contain_text("Pending review", timeout=SLOW)
    retry = app.get_by_text("Automatic retry: 1 failed edit of this file sent back to the model")
    await expect(retry).to_be_visible()
    await retry.click()
    await expect(app).to_contain_text("Sent back: failed: src/app.py")

    # The model read config.py, then the person changed the line its edit is about.
    server.script_replies(
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "src/config.py"}}]},
        {"tool_calls": [edit_call("src/config.py", "SETTING_15 = 15", "SETTING_15 = 1500")]},
        {"text": "Raised it."},
    )
    await send_message(page, "Raise setting 15", "Raised it.")
    config = page.get_by_role("region", name="src/config.py").last
    await expect(config).to_contain_text("Pending review", timeout=SLOW)
    (server.repo / "src" / "config.py").write_text(CONFIG.replace("= 15\n", "= 16\n"))
    await expect(config).to_contain_text("Conflict", timeout=SLOW)
    await expect(config).to_contain_text("What changed on disk in those lines")
    await expect(config).to_contain_text("@@ -12,7 +12,7 @@")  # where it is, not line 1
    await expect(config).to_contain_text("+SETTING_15 = 16")
    await config.scroll_into_view_if_needed()
    await screenshot(page, "edits-conflict-region-light")
    await page.get_by_role("button", name="Dark mode").click()
    await expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    await screenshot(page, "edits-conflict-region-dark")
    await page.get_by_role("button", name="Dark mode").click()
    await expect(page.locator("html")).to_have_attribute("data-theme", "light")


async def test_auto_apply_waits_for_a_protected_file(server, page):
    await page.goto(server.session_url)
    await page.get_by_role("checkbox", name="Auto-apply edits").check()
    await expect(page.get_by_role("checkbox", name="Auto-apply edits")).to_be_checked()
    server.script_replies(
        {
            "tool_calls": [
                {
                    "name": "write_file",
                    "arguments": {"path": ".acdcignore", "content": "*.log\n!.env\n"},
                }
            ]
        },
        {"text": "Adjusted the ignore file."},
    )
    await send_message(page, "Tidy the ignore file", "Adjusted the ignore file.")
    card = page.get_by_role("region", name=".acdcignore")
    await expect(card).to_contain_text("Pending review", timeout=SLOW)
    await expect(card.get_by_role("note")).to_contain_text("which files acdc treats as secret")
    await expect(page.get_by_role("alert").filter(has_text="Auto-apply waited")).to_be_visible()
    assert not (server.repo / ".acdcignore").exists()
    await expect(
        page.get_by_role("button", name="Accept all edits (including .acdcignore)")
    ).to_be_visible()
    await card.scroll_into_view_if_needed()
    await screenshot(page, "edits-protected-light")
    await page.get_by_role("checkbox", name="Auto-apply edits").uncheck()
