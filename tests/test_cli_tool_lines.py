"""`acdc chat` says which tools ran, one line each on stderr, in this process and through a
server; `acdc serve` prints each line of acdc's own loggers once beside Daphne's."""

from __future__ import annotations

import io
import json
import logging

import pytest

from acdc.terminal import endpoint, printing
from chat.turn.events import ToolCallFinished, TurnFinished
from tests.cli_inprocess import cli_fixture  # noqa: F401 (the `cli` fixture)


@pytest.fixture
def repo_files() -> dict[str, str]:
    return {"main.py": "print('hi')\n"}


@pytest.mark.django_db(transaction=True)
def test_each_tool_the_model_called_is_one_line(cli, tmp_path):
    calls = [
        {"name": "read_file", "arguments": {"path": "main.py"}, "id": "r1"},
        {"name": "grep", "arguments": {"pattern": "hi\nthere"}, "id": "g1"},
        {"name": "read_file", "arguments": {"path": "gone.py"}, "id": "r2"},
    ]
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": calls}, {"text": "Read it."}]))

    result = cli("chat", "--new", "--model", "acdc/fake", "go", ACDC_FAKE_SCRIPT=str(script))

    assert result.returncode == 0, result.stderr
    tools = [line for line in result.stderr.splitlines() if line.startswith("acdc: tool ")]
    assert tools == [
        "acdc: tool read_file(path='main.py'): done",
        "acdc: tool grep(pattern='hi\\nthere'): done",  # one line, whatever the model wrote
        "acdc: tool read_file(path='gone.py'): failed",
    ]
    assert result.stdout.strip() == "Read it."


async def test_through_a_server_each_tool_is_one_note_and_a_command_says_how_it_ended():
    watcher, sent = endpoint._Watcher(), []
    output = "$ npm test\nexit status 1 after 2.5 s\n  14 failing\n"
    await watcher.event(ToolCallFinished("t1", "c1", "run_command", "run_command(name='test')",
                                         "fail", output, "obj1"))  # fmt: skip
    await watcher.event(TurnFinished("t1", "error", "", None, error="the model went away"))
    watcher.done()

    class Stream:
        async def line(self, **fields) -> None:
            sent.append(fields)

    assert await endpoint._relay(Stream(), watcher, "s1", apply=False) == 1
    assert sent[0] == {"note": "tool run_command(name='test'): failed, exit status 1 after 2.5 s"}


def test_a_line_of_acdc_s_own_loggers_is_not_printed_again_by_daphne_s(monkeypatch):
    theirs = io.StringIO()  # the root handler Daphne's logging.basicConfig adds
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", [*root.handlers, logging.StreamHandler(theirs)])
    for name in printing.OWN_LOGGERS:
        own = logging.getLogger(name)
        monkeypatch.setattr(own, "propagate", own.propagate)  # put back afterwards

    printing.log_once_beside_daphne()
    logging.getLogger("chat.repo.repomap.builder").warning("map ready: 1 files")

    assert theirs.getvalue() == ""
    assert logging.getLogger("chat").handlers  # printed by acdc's own handler
