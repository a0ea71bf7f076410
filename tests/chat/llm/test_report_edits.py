"""`acdc/dry-run`'s report says how the model would be offered edits (ACDC_EDITS on): the
edit tools when the request carries them, SEARCH/REPLACE blocks when only the system
prompt teaches them; with edits off it says nothing of edits."""

from __future__ import annotations

from chat.llm.report import render_report
from chat.repo.edittools import BLOCKS_INSTRUCTION, EDIT_TOOL_SPECS
from contextcore.models import ModelFacts
from contextcore.tokens import TokenCounter
from tests.test_cli import acdc

FACTS = ModelFacts(name="x")


def report(system: str, tools: list[dict]) -> str:
    messages = [{"role": "system", "content": system}, {"role": "user", "content": "hi"}]
    return render_report(
        model="acdc/dry-run",
        messages=messages,
        tools=tools,
        facts=FACTS,
        breakdown=None,
        counter=TokenCounter(),
    )


def test_the_report_names_the_edit_tools_or_the_block_format_or_nothing():
    with_tools = report(
        "You are acdc.", [{"type": "function", "function": {"name": "grep"}}, *EDIT_TOOL_SPECS]
    )
    assert "- Edits: offered as tools (`edit_file`, `write_file`)" in with_tools
    blocks = report("You are acdc.\n" + BLOCKS_INSTRUCTION, [])
    assert "- Edits: as SEARCH/REPLACE blocks in the reply (no edit tools offered)" in blocks
    assert "Edits:" not in report("You are acdc.", [])


def test_a_dry_run_turn_reports_the_edit_tools_only_with_edits_on(root):
    on = acdc("chat", "--new", "--model", "acdc/dry-run", "hi", repo=root, ACDC_EDITS="1")
    assert on.returncode == 0, on.stderr
    assert "- Edits: offered as tools (`edit_file`, `write_file`)" in on.stdout
    off = acdc("chat", "--new", "--model", "acdc/dry-run", "hi", repo=root, ACDC_EDITS="0")
    assert off.returncode == 0 and "Edits:" not in off.stdout
