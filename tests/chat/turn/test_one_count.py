"""One number for one request: the dry-run report, the status line and the Context panel
show the same prompt tokens, formatted alike; the panel counts every request (tool rounds
too) beside the turns.

Real turns through litellm and the offline models; the page's frames rendered as the
socket sends them.
"""

from __future__ import annotations

import json
import re

import pytest
from django.template.loader import render_to_string

from chat.live.frames import finished_frame
from chat.live.served import served
from chat.llm.fake import FakeStep
from chat.turn.events import HudUpdate
from chat.turn.turns import TurnInput, TurnServices, run_turn
from tests.chat.sockets import new_session

pytestmark = pytest.mark.django_db(transaction=True)


async def turn(session, text: str, model: str):
    events: list[object] = []

    async def emit(event) -> None:
        events.append(event)

    finished = await run_turn(
        TurnInput(session_id=session.id, user_text=text, model=model),
        TurnServices(emit=emit, wiring=served()),
    )
    hud = next(e.hud for e in events if isinstance(e, HudUpdate))
    return finished, render_to_string("chat/_hud.html", {"hud": hud})


def status_line(finished) -> str:
    frame = finished_frame(finished, "")
    return re.search(r'<div id="status-line"[^>]*>(.*?)</div>', frame, re.S).group(1)


async def test_a_dry_run_turns_report_status_line_and_panel_show_one_count(served_root):
    session = await new_session(model="acdc/dry-run")
    finished, panel = await turn(session, "How is it built?", "acdc/dry-run")
    reported = re.search(r"Total prompt tokens: ([\d,]+)", finished.text).group(1)
    assert "," in reported  # thousands apart, as everywhere
    assert f"· {reported} prompt tokens," in status_line(finished)
    assert f'<strong class="hud-last-prompt">{reported}</strong> prompt tokens' in panel
    assert "1 request in 1 turn" in panel


async def test_the_panel_counts_each_request_of_a_turns_tool_rounds(fake, served_root):
    read = {"name": "read_file", "arguments": json.dumps({"path": "src/app.py"})}
    fake.enqueue(FakeStep(tool_calls=[read]), FakeStep(text="It prints."), FakeStep(text="Yes."))
    session = await new_session(model="acdc/fake")
    first, _ = await turn(session, "What does app.py do?", "acdc/fake")
    assert re.search(
        r"· 2 requests, the last of [\d,]+ prompt tokens \([\d,]+ in all\)", status_line(first)
    )
    second, panel = await turn(session, "Sure?", "acdc/fake")
    assert len(fake.requests) == 3
    assert "3 requests in 2 turns" in panel
    last = re.search(r"· ([\d,]+) prompt tokens,", status_line(second)).group(1)
    assert f'<strong class="hud-last-prompt">{last}</strong>' in panel
