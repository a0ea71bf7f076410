"""A person picks the session's model in the header: the next message goes to it, a reload
shows the session's own model, and a malformed name is refused in words."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def choose(page, model: str) -> None:
    chooser = page.get_by_role("combobox", name="Model")
    await chooser.fill(model)
    await chooser.press("Enter")


async def send(page, text: str) -> None:
    await expect(page.get_by_role("button", name="Send")).to_be_enabled(timeout=SLOW)
    await page.get_by_role("textbox", name="Message").fill(text)
    await page.get_by_role("button", name="Send").click()


async def test_the_chosen_model_answers_the_next_message_and_survives_a_reload(server, page):
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    await page.goto(server.session_url)
    chooser = page.get_by_role("combobox", name="Model")
    await expect(chooser).to_have_value("acdc/fake")  # ACDC_MODEL: new sessions start with it

    await choose(page, "acdc/dry-run")
    notice = page.get_by_role("status").filter(has_text="Takes effect on the next message")
    await expect(notice).to_contain_text("cached prefix is rebuilt at the new model's prices")
    await expect(chooser).to_have_value("acdc/dry-run")
    await screenshot(page, "model-chooser-switched")
    log = page.get_by_role("log", name="Conversation")
    await send(page, "What is in this repository?")
    await expect(log).to_contain_text("Dry run: nothing was sent to a model", timeout=SLOW)

    await page.reload()  # a restored session shows its own model, not the default
    await expect(chooser).to_have_value("acdc/dry-run")
    await expect(page.get_by_text("New sessions start with acdc/fake.")).to_be_visible()

    await choose(page, "acdc/fake")
    await expect(notice).to_be_visible()
    await send(page, "And now the fake")
    await expect(log).to_contain_text("Fake reply to: And now the fake", timeout=SLOW)
    assert errors == []


async def test_a_malformed_model_name_is_refused_in_words(server, page):
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    await page.goto(server.session_url)
    chooser = page.get_by_role("combobox", name="Model")
    await expect(chooser).to_have_value("acdc/fake")
    await choose(page, "acdc fake")
    await expect(page.get_by_role("alert")).to_contain_text("no spaces")
    await expect(chooser).to_have_value("acdc/fake")  # the model in force is unchanged
    await screenshot(page, "model-chooser-refused")
    assert errors == []
