"""`acdc/dry-run`'s report names the command tools the request offers (issue 32)."""

from __future__ import annotations

from chat.repo.commands.model_tools import COMMAND_TOOL_SPECS
from tests.chat.llm.test_report_edits import report
from tests.test_cli import acdc


def test_the_report_names_the_command_tools_when_offered():
    offered = report("You are acdc.", [*COMMAND_TOOL_SPECS])
    assert "- Commands: offered as tools (`run_command`, `propose_command`)" in offered
    assert "Commands:" not in report("You are acdc.", [])


def test_a_dry_run_turn_reports_the_command_tools(root):
    done = acdc("chat", "--new", "--model", "acdc/dry-run", "hi", repo=root)
    assert done.returncode == 0, done.stderr
    assert "- Commands: offered as tools (`run_command`, `propose_command`)" in done.stdout
