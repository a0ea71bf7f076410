"""The answer to a choice in the Files panel is a fragment of the rows whose state changed:
the files chosen or dropped, and the folders above them with their three states figured on
the server; the rows the choice did not touch are not in it."""

from __future__ import annotations

import re

import pytest

from chat.web.panels.fileupdates import row_key
from tests.chat.sockets import connect, new_session, next_frame, send
from tests.chat.web.pickerhtml import answer_states as rows

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("served_root")]


@pytest.fixture
def repo_files():
    return {
        "lib/a.py": "def a():\n    return 1\n",
        "lib/deep/b.py": "def b():\n    return 2\n",
        "lib/deep/c.py": "def c():\n    return 3\n",
        "other/d.py": "def d():\n    return 4\n",
        "README.md": "# Readme\n",
    }


async def _answer(ws) -> str:
    """The next answer to a choice (the counts' updates come meanwhile too)."""
    while not (frame := await next_frame(ws)).startswith(
        '<div id="picker-update" hx-swap-oob="true" hidden data-selection='
    ):
        assert not frame.startswith("{"), f"a JSON answer: {frame[:200]}"
    return frame


async def test_a_choice_is_answered_with_the_rows_it_changed_and_the_folders_three_states():
    ws = await connect((await new_session()).id)
    await send(ws, action="select", path="lib/deep/b.py", selection="tab1-1")
    answer = await _answer(ws)
    assert 'data-selection="tab1-1"' in answer and re.search(r'data-budget="\d+"', answer)
    assert rows(answer) == {
        row_key("lib/deep/b.py"): "on",
        row_key("lib/deep"): "some",
        row_key("lib"): "some",
    }
    hud = await next_frame(ws)
    budget = re.search(r'data-budget="(\d+)"', answer).group(1)
    assert f"of {int(budget):,} tokens" in hud  # one budget figure, HUD and picker

    # The rest of lib/deep: the folder is whole now, lib still mixed; b.py did not change.
    chosen = ["lib/deep/b.py", "lib/deep/c.py"]
    await send(ws, action="select", path=chosen, outline=["lib/deep/c.py"], selection="tab1-2")
    answer = await _answer(ws)
    assert rows(answer) == {
        row_key("lib/deep/c.py"): "outline",
        row_key("lib/deep"): "all",
        row_key("lib"): "some",
    }
    assert 'data-folder="lib/deep" data-sel="all"' in answer
    assert row_key("other/d.py") not in answer and row_key("README.md") not in answer

    await send(ws, action="select", selection="tab1-3")  # nothing ticked
    answer = await _answer(ws)
    assert rows(answer) == {
        row_key("lib/deep/b.py"): "off",
        row_key("lib/deep/c.py"): "off",
        row_key("lib/deep"): "none",
        row_key("lib"): "none",
    }
    await ws.disconnect()
