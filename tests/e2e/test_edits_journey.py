"""The review of the model's edits as a person goes through it: diff cards under the reply,
Accept and Reject per hunk and file, the file on disk and the Files panel's git badge
following, the same state after a reload and in another tab, Undo, a conflict from a change
made on disk, and Auto-apply."""

from __future__ import annotations

import subprocess

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot, send_message

pytestmark = [
    pytest.mark.asyncio(loop_scope="session"),
    pytest.mark.server_env(ACDC_EDITS="1"),
    pytest.mark.own_server,  # it commits the repository, for git's M badge
]
APP = "def greet(name):\n    return f'hello {name}'\n"
CONFIG = "".join(f"SETTING_{n} = {n}\n" for n in range(1, 31))
BLOCKS = """Both changes are below.

src/config.py
```python
<<<<<<< SEARCH
SETTING_2 = 2
=======
SETTING_2 = 200
>>>>>>> REPLACE
<<<<<<< SEARCH
SETTING_15 = 15
=======
SETTING_15 = 1500
>>>>>>> REPLACE
<<<<<<< SEARCH
SETTING_28 = 28
=======
SETTING_28 = 2800
>>>>>>> REPLACE
```
"""


def edit_call(path: str, old: str, new: str) -> dict:
    return {"name": "edit_file", "arguments": {"path": path, "old_text": old, "new_text": new}}


def commit_all(repo) -> None:
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "start"], check=True)


async def test_the_person_reviews_accepts_rejects_and_undoes_the_models_edits(server, page):
    (server.repo / "src" / "config.py").write_text(CONFIG)
    commit_all(server.repo)
    server.script_replies(
        {"tool_calls": [edit_call("src/app.py", "f'hello {name}'", "f'hi {name}!'")]},
        {"text": BLOCKS},
    )
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    await page.goto(server.session_url)
    await send_message(page, "Greet more warmly and raise three settings", "Both changes")

    app = page.get_by_role("region", name="src/app.py")
    config = page.get_by_role("region", name="src/config.py")
    await expect(app).to_contain_text("Pending review", timeout=SLOW)
    await expect(app).to_contain_text("+1 −1")
    await expect(config).to_contain_text("+3 −3")
    await expect(
        config.get_by_role("button", name="Accept hunk 3 of src/config.py")
    ).to_be_visible()
    await page.get_by_role("region", name="Proposed edits").scroll_into_view_if_needed()
    await screenshot(page, "edits-pending-light")

    # One hunk accepted: only it is written; the other two stay pending, numbered again.
    await config.get_by_role("button", name="Accept hunk 1 of src/config.py").click()
    await expect(page.get_by_role("status").filter(has_text="1 of 3 hunks")).to_be_visible()
    text = (server.repo / "src" / "config.py").read_text()
    assert "SETTING_2 = 200\n" in text and "SETTING_15 = 15\n" in text
    await expect(config).to_contain_text("+2 −2")
    # Another rejected: nothing written, the last one still pending.
    await config.get_by_role("button", name="Reject hunk 2 of src/config.py").click()
    await expect(config).to_contain_text("+1 −1")
    assert (server.repo / "src" / "config.py").read_text() == text
    await config.get_by_role("button", name="Accept src/config.py").click()
    await expect(config).to_contain_text("Applied")
    text = (server.repo / "src" / "config.py").read_text()
    assert "SETTING_15 = 1500\n" in text and "SETTING_28 = 28\n" in text

    await app.get_by_role("button", name="Accept src/app.py").click()
    await expect(app).to_contain_text("Applied")
    assert (server.repo / "src" / "app.py").read_text() == APP.replace("hello {name}", "hi {name}!")
    files = page.get_by_role("region", name="Files")
    await expect(files.locator('[data-row="src/app.py"]').get_by_title("modified")).to_have_text(
        "M"
    )

    # A reload and another tab show the same; Undo in the other tab reaches this one.
    await page.reload()
    await expect(app).to_contain_text("Applied", timeout=SLOW)
    await expect(config).to_contain_text("Applied")
    other = await page.context.new_page()
    await other.goto(server.session_url)
    other_app = other.get_by_role("region", name="src/app.py")
    await expect(other_app).to_contain_text("Applied", timeout=SLOW)
    await expect(other.locator("#status-line")).not_to_have_text("Connecting…", timeout=SLOW)
    await other_app.get_by_role("button", name="Undo src/app.py").click()
    await expect(app).to_contain_text("Undone", timeout=SLOW)
    assert (server.repo / "src" / "app.py").read_text() == APP
    await expect(files.locator('[data-row="src/app.py"]').get_by_title("modified")).to_have_count(0)
    await other.close()
    await app.scroll_into_view_if_needed()
    await screenshot(page, "edits-decided-light")

    # The file changes on disk after the model read it: its pending card is a conflict.
    server.script_replies(
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "README.md"}}]},
        {"tool_calls": [edit_call("README.md", "# Sample repository", "# Sample project")]},
        {"text": "Renamed the title."},
    )
    await send_message(page, "Rename the title", "Renamed the title.")
    readme = page.get_by_role("region", name="README.md")
    await expect(readme).to_contain_text("Pending review", timeout=SLOW)
    (server.repo / "README.md").write_text("# My own title\n")
    await expect(readme).to_contain_text("Conflict", timeout=SLOW)  # no button pressed
    await expect(readme.get_by_role("button", name="Accept README.md")).to_have_count(0)
    await expect(readme).to_contain_text("# My own title")
    await expect(readme).to_contain_text("# Sample repository")
    assert (server.repo / "README.md").read_text() == "# My own title\n"
    await readme.scroll_into_view_if_needed()
    await screenshot(page, "edits-conflict-light")

    # Auto-apply: the edit is written at once, and its card still shows.
    await page.get_by_role("checkbox", name="Auto-apply edits").check()
    await expect(page.get_by_role("checkbox", name="Auto-apply edits")).to_be_checked()
    server.script_replies(
        {"tool_calls": [edit_call("src/app.py", "f'hello {name}'", "f'welcome {name}'")]},
        {"text": "Welcomed."},
    )
    await send_message(page, "Welcome them", "Welcomed.")
    cards = page.get_by_role("region", name="src/app.py")
    await expect(cards.last).to_contain_text("Applied", timeout=SLOW)
    assert "welcome {name}" in (server.repo / "src" / "app.py").read_text()
    await expect(files.locator('[data-row="src/app.py"]').get_by_title("modified")).to_have_text(
        "M"
    )

    await page.get_by_role("button", name="Dark mode").click()
    await expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    await readme.scroll_into_view_if_needed()
    await screenshot(page, "edits-dark")
    assert errors == [], errors
