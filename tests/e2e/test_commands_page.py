"""Session tools → Commands as a person meets it: a repository whose pyproject.toml configures
pytest and whose Makefile has a `test` target shows both as suggestions; one is added, chosen
as the check after applying edits (a reload keeps the choice), and removed. A mistyped
declaration says what is wrong beside the form. Screenshots at 1400 px light and dark and at
390 px."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import screenshot

pytestmark = [
    pytest.mark.asyncio(loop_scope="session"),
    pytest.mark.server_env(ACDC_EDITS="1"),
    pytest.mark.own_server,  # its declarations and check must not reach other tests' sessions
]
PYPROJECT = '[project]\nname = "sample"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n'
MAKEFILE = "test:\n\tpython3 -m pytest\n\nrelease:\n\t./ship.sh\n"
SETTLING = re.compile(r"\bhtmx-(added|settling)\b")


async def test_a_suggestion_is_added_chosen_as_the_check_and_removed(server, page):
    (server.repo / "pyproject.toml").write_text(PYPROJECT)
    (server.repo / "Makefile").write_text(MAKEFILE)
    await page.set_viewport_size({"width": 1400, "height": 900})
    await page.goto(server.session_url)

    part = page.get_by_role("region", name="Commands")
    suggested = part.get_by_role("list", name="Suggested commands")
    await expect(suggested).to_contain_text("pyproject.toml configures pytest")
    await expect(suggested).to_contain_text("python3 -m pytest -q")
    await expect(suggested).to_contain_text("Makefile has a 'test' target")
    await expect(suggested).not_to_contain_text("release")
    declared = part.get_by_role("list", name="Declared commands")
    await expect(declared).to_contain_text("None declared yet")
    await part.scroll_into_view_if_needed()
    await screenshot(page, "commands-1400-light")

    await suggested.get_by_role("button", name="Add test", exact=True).click()
    await expect(part.get_by_role("status")).to_contain_text("Declared test: python3 -m pytest -q")
    await expect(declared).to_contain_text("python3 -m pytest -q")
    await expect(declared).to_contain_text("120 s timeout · no network")
    await expect(suggested.get_by_role("button", name="Add test", exact=True)).to_have_count(0)
    # The part is drawn at once, but htmx binds its forms when the swap settles (a timer):
    # a change made before then sends nothing, so the person's next act waits for that.
    await expect(page.locator("#commands")).not_to_have_class(SETTLING)

    check = part.get_by_label("Check after applying edits")
    await check.select_option("test")
    await expect(part.get_by_role("status")).to_contain_text("After edits apply, test runs.")
    await page.reload()
    await expect(check).to_have_value("test")
    await page.emulate_media(color_scheme="dark")
    await part.scroll_into_view_if_needed()
    await screenshot(page, "commands-1400-dark")

    await declared.get_by_role("button", name="Remove test").click()
    await expect(part.get_by_role("status")).to_contain_text(
        "Removed test; the check after applying edits is off."
    )
    await expect(declared).to_contain_text("None declared yet")
    await expect(check).to_have_value("")
    await expect(suggested.get_by_role("button", name="Add test", exact=True)).to_be_visible()


async def test_a_mistyped_declaration_is_explained_beside_the_form_at_phone_width(server, page):
    await page.set_viewport_size({"width": 390, "height": 844})
    await page.goto(server.session_url)
    await page.get_by_role("button", name="Context panel").click()  # folded at phone width
    part = page.get_by_role("region", name="Commands")
    await part.get_by_text("Declare a command").click()
    await part.get_by_label("Name", exact=True).fill("unit tests")
    await part.get_by_label("Command", exact=True).fill("sh -c 'make test && echo ok'")
    await part.get_by_role("button", name="Declare").click()
    await expect(part.get_by_role("alert")).to_contain_text("'unit tests' is not a command name")
    await expect(part.get_by_label("Command", exact=True)).to_have_value(
        "sh -c 'make test && echo ok'"
    )

    await part.get_by_label("Name", exact=True).fill("unit")
    await part.get_by_role("button", name="Declare").click()
    declared = part.get_by_role("list", name="Declared commands")
    await expect(declared).to_contain_text("sh -c 'make test && echo ok'  [a shell]")
    await expect(part.get_by_role("status")).to_contain_text("(3 words)")
    await part.get_by_text("Declare a command").click()
    await part.get_by_label("Name", exact=True).fill("")
    await part.get_by_role("button", name="Declare").click()
    await expect(part.get_by_role("alert")).to_contain_text("Give the command a name")
    await part.scroll_into_view_if_needed()
    await screenshot(page, "commands-390-light")
    box = await part.bounding_box()
    assert box["width"] <= 390, box  # nothing pushes the page sideways
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, width
