"""Panels follow the session without a reload: the Context panel moves with the picker's
choice, and every open tab follows an undone compaction, the automatic checkpoint, a turn
sent from the terminal and another tab's model."""

from __future__ import annotations

import asyncio
import os
import re
import sys

import pytest
from playwright.async_api import TimeoutError as PlaywrightTimeout
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot

pytestmark = pytest.mark.asyncio(loop_scope="session")

ENV = {  # one server for the module: a small compaction trigger, a checkpoint every 2 turns
    "ACDC_COMPACTION_TRIGGER_TOKENS": "500",
    "ACDC_VERBATIM_WINDOW_TOKENS": "150",
    "ACDC_SMALLER_MODEL": "acdc/fake",
    "ACDC_CHECKPOINT_EVERY": "2",
}
LONG = "Walk me through the tokenizer cache, the lexer and the parser error recovery. " * 5
SUMMARY = "The user asked about the tokenizer cache, the lexer and parser recovery."
# Whether the HUD's "history 620 of 500 before compaction" is past (or within) the trigger.
HISTORY = r"""(over) => {
  const hud = document.querySelector('[aria-label="Context"]');
  const found = hud && hud.textContent.match(/history ([\d,]+) of ([\d,]+) before compaction/);
  if (!found) return false;
  const [history, trigger] = [1, 2].map((i) => Number(found[i].replaceAll(",", "")));
  return over ? history > trigger : history <= trigger;
}"""


async def history_of(page) -> int:
    """The history's tokens the Context panel shows."""
    text = await page.get_by_role("region", name="Context").inner_text()
    found = re.search(r"history ([\d,]+) of [\d,]+ before compaction", text)
    assert found, text
    return int(found.group(1).replace(",", ""))


async def wait_history(page, over: bool) -> None:
    """Until the Context panel's history is past (or within) the compaction trigger."""
    try:
        await page.wait_for_function(HISTORY, arg=over, timeout=SLOW)
    except PlaywrightTimeout:
        shown = await page.get_by_role("region", name="Context").inner_text()
        where = "past" if over else "within"
        raise AssertionError(f"the history never came {where} the trigger:\n{shown}") from None


async def send(page, text: str, answered: str) -> None:
    await expect(page.get_by_role("button", name="Send")).to_be_enabled(timeout=SLOW)
    await page.get_by_role("textbox", name="Message").fill(text)
    await page.get_by_role("button", name="Send").click()
    await expect(page.get_by_role("log", name="Conversation")).to_contain_text(
        answered, timeout=SLOW
    )


async def connected(page) -> None:
    await expect(page.get_by_role("button", name="Send")).to_be_enabled(timeout=SLOW)


def _write_big_file(server) -> None:
    # ~950 kB of varied text: under the 1 MB size cap, over acdc/fake's 200k-token window.
    lines = (
        f"line {n}: the parser reads token {n * 7} and emits node {n % 97}\n" for n in range(16_000)
    )
    (server.repo / "big.txt").write_text("".join(lines))


@pytest.mark.server_env(**ENV)
async def test_the_context_panel_follows_the_pickers_choice(server, page):
    _write_big_file(server)
    await page.goto(server.session_url)
    files = page.get_by_role("region", name="Files")
    hud = page.get_by_role("region", name="Context")
    await files.get_by_role("checkbox", name="src/app.py").check()
    await expect(hud).to_contain_text("Active files", timeout=SLOW)
    await expect(hud).to_have_class(re.compile("level-green"))
    count = page.locator('[data-row="big.txt"]').get_by_title("Tokens of the whole file")
    await expect(count).to_have_text(re.compile(r"^\d{3},\d{3}$"), timeout=SLOW)

    # The server owns the selection: its answer brings the Context panel's figures (the
    # page no longer guesses them from the rows while the choice is on its way).
    await files.get_by_role("checkbox", name="big.txt").check()
    await expect(hud).to_have_class(re.compile("level-red"), timeout=SLOW)
    await expect(hud).to_contain_text("Over budget")
    await screenshot(page, "panels-context-over")
    await files.get_by_role("checkbox", name="big.txt").uncheck()
    await expect(hud).to_have_class(re.compile("level-green"))


@pytest.mark.server_env(**ENV)
async def test_an_undone_compaction_shows_its_history_size_in_every_tab(server, page):
    detector = {"text": '{"boundary_index": null, "confidence": 0.1}', "purpose": "topic_detection"}
    summary = {"text": SUMMARY, "purpose": "history_summary"}
    server.script_replies(*[detector, summary] * 3)  # a first look may find nothing to fold
    await page.goto(server.session_url)
    other = await page.context.new_page()
    await other.goto(server.session_url)
    await connected(other)
    # A compaction runs after an answer and holds the next message until it is done; its
    # status line clears as that message's turn starts, so the conversation's own note and
    # fold are what is looked for.
    log = page.get_by_role("log", name="Conversation")
    folded = log.locator("details.folded")
    for n in range(1, 13):
        await send(page, f"Question {n}: {LONG}", f"Fake reply to: Question {n}")
        if await folded.count():
            break
    else:
        pytest.fail("the history was never compacted")
    await expect(log).to_contain_text("History compacted (summarized)", timeout=SLOW)
    await wait_history(page, over=False)
    await wait_history(other, over=False)
    compacted = await history_of(other)

    undo = page.get_by_role("button", name="Undo compaction")  # shown without a reload too
    page.once("dialog", lambda dialog: dialog.accept())
    await undo.click()
    # The tab that pressed it reloads: its panel counts the history put back (it was saved).
    await expect(log).to_contain_text("Compaction undone", timeout=SLOW)
    reloaded = await history_of(page)
    assert reloaded > compacted
    folded = await log.locator("details.folded").count()
    # The other tab, never reloaded, shows what the reloaded one shows.
    theirs = other.get_by_role("log", name="Conversation")
    await expect(theirs).to_contain_text("Compaction undone")
    await expect(theirs.locator("details.folded")).to_have_count(folded)
    context = other.get_by_role("region", name="Context")
    await expect(context).to_contain_text(f"history {reloaded:,} of")
    await screenshot(other, "panels-undo-other-tab")


@pytest.mark.server_env(**ENV)
async def test_the_automatic_checkpoint_is_listed_as_it_is_taken(server, page):
    await page.goto(server.session_url)
    tools = page.get_by_role("region", name="Session tools")
    checkpoints = tools.get_by_role("list", name="Checkpoints")
    await expect(checkpoints).to_contain_text("No checkpoints yet")
    await send(page, "First turn", "Fake reply to: First turn")
    await send(page, "Second turn", "Fake reply to: Second turn")
    taken = checkpoints.get_by_role("listitem").filter(has_text="After 2 turns")
    await expect(taken).to_contain_text("Auto", timeout=SLOW)
    await screenshot(page, "panels-auto-checkpoint")


async def _acdc_chat(server, *arguments: str) -> str:
    """`acdc chat` in its own process, on the server's database and repository."""
    env = {
        **os.environ,
        **ENV,
        "ACDC_REPO": str(server.repo),
        "ACDC_DATA_DIR": str(server.data_dir),
        "ACDC_MODEL": "acdc/fake",
        "ACDC_FAKE_SCRIPT": str(server.script),
    }
    env.pop("ACDC_TOKEN", None)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "acdc",
        "chat",
        *arguments,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await process.communicate()
    text = output.decode(errors="replace")
    assert process.returncode == 0, text
    return text


@pytest.mark.server_env(**ENV)
async def test_a_turn_sent_from_the_terminal_appears_in_the_open_tab(server, page):
    await page.goto(server.session_url)
    await connected(page)
    session_id = server.session_url.rstrip("/").rsplit("/", 1)[-1]
    await _acdc_chat(server, "--session", session_id, "--model", "acdc/dry-run", "From the CLI")
    log = page.get_by_role("log", name="Conversation")
    await expect(log).to_contain_text("From the CLI", timeout=SLOW)
    await expect(log).to_contain_text("Dry run: nothing was sent to a model")
    await expect(page).to_have_title(re.compile(r"^From the CLI · "))  # it named the session
    await expect(page.get_by_role("combobox", name="Model")).to_have_value("acdc/dry-run")
    await expect(page.get_by_role("region", name="Context")).to_contain_text("1 request")
    await screenshot(page, "panels-cli-turn")


@pytest.mark.server_env(**ENV)
async def test_a_model_chosen_in_one_tab_shows_in_the_other(server, page):
    await page.goto(server.session_url)
    other = await page.context.new_page()
    await other.goto(server.session_url)
    await connected(other)
    theirs = other.get_by_role("combobox", name="Model")
    await expect(theirs).to_have_value("acdc/fake")
    chooser = page.get_by_role("combobox", name="Model")
    await chooser.fill("acdc/dry-run")
    await chooser.press("Enter")
    await expect(page.get_by_role("status").filter(has_text="Takes effect")).to_be_visible()
    await expect(theirs).to_have_value("acdc/dry-run")
    # The tab that chose keeps its note: it already shows the session's model.
    await expect(page.get_by_role("status").filter(has_text="Takes effect")).to_be_visible()
    await screenshot(other, "panels-model-other-tab")
