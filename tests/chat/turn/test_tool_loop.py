"""The tool loop of a turn, with `acdc/fake` scripted to call tools."""

from __future__ import annotations

import json
import re

import pytest
from channels.db import database_sync_to_async
from django.test import Client, override_settings

from chat.live.served import served
from chat.llm.fake import FakeStep
from chat.repo import sessionsets
from chat.turn.events import (
    SetsChanged,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    TurnNotice,
)
from chat.turn.turns import TurnInput, TurnServices, run_turn
from history.models import Message
from tests import serving
from tests.chat.sockets import connect, frames_until, new_session, send

pytestmark = pytest.mark.django_db(transaction=True)


def tool(name: str, arguments, call_id: str = "") -> dict:
    call = {"name": name, "arguments": arguments}
    return {**call, "id": call_id} if call_id else call


async def turn(session, text: str) -> list:
    events: list = []

    async def emit(event) -> None:
        events.append(event)

    await run_turn(
        TurnInput(session_id=session.id, user_text=text, model="acdc/fake"),
        TurnServices(emit=emit, wiring=served()),
    )
    return events


async def test_the_model_reads_a_file_and_answers_with_it(fake):
    session = await new_session()
    fake.enqueue(
        FakeStep(text="Let me look.", tool_calls=[tool("read_file", {"path": "src/app.py"}, "c1")]),
        FakeStep(text="It greets by name."),
    )

    events = await turn(session, "What does app.py do?")

    first, second = fake.requests[-2], fake.requests[-1]
    assert {t["function"]["name"] for t in first.tools} >= {"read_file", "grep", "activate"}
    asked, *answers = second.messages[-2:]
    assert asked["role"] == "assistant" and asked["tool_calls"][0]["id"] == "c1"
    assert asked["tool_calls"][0]["function"]["name"] == "read_file"
    assert answers[0]["role"] == "tool" and answers[0]["tool_call_id"] == "c1"
    assert "def greet(name):" in answers[0]["content"]
    kinds = [type(e) for e in events]
    assert kinds.index(ToolCallStarted) < kinds.index(ToolCallFinished) < kinds.index(SetsChanged)
    changed = next(e for e in events if isinstance(e, SetsChanged))
    assert changed.paths == ("src/app.py",) and "src/app.py" in changed.active
    finished = next(e for e in events if isinstance(e, TurnFinished))
    assert finished.text == "Let me look.\n\nIt greets by name." and finished.tool_cards
    rows = await database_sync_to_async(
        lambda: list(Message.objects.filter(session=session).values_list("role", "content"))
    )()
    roles = [role for role, _ in rows]
    assert roles == ["user", "tool", "assistant"]  # the answer row is stored when it ends
    assert await database_sync_to_async(sessionsets.active_paths)(
        session, repo=serving.repository()
    ) == ["src/app.py"]

    # The next turn remembers the call as a reference and carries the output while active.
    await turn(session, "And then?")
    sent = json.dumps(fake.requests[-1].messages)
    object_id = finished.tool_cards[0].object_id
    assert f"toolcall_ref id={object_id} tool=read_file status=ok" in sent
    assert f"ACTIVE_CONTENT id={object_id}" in sent


async def test_bad_tool_calls_are_answered_with_errors_and_the_turn_goes_on(fake):
    session = await new_session()
    fake.enqueue(
        FakeStep(
            tool_calls=[
                tool("read_file", "{not json", "bad1"),
                tool("rm_rf", {"path": "/"}, "bad2"),
                tool("read_file", {"path": "../../etc/passwd"}, "bad3"),
            ]
        ),
        FakeStep(text="Sorry, those failed."),
    )
    events = await turn(session, "Try things")
    results = [m for m in fake.requests[-1].messages if m.get("role") == "tool"]
    assert [r["tool_call_id"] for r in results] == ["bad1", "bad2", "bad3"]
    assert "not valid JSON" in results[0]["content"]
    assert "there is no tool 'rm_rf'" in results[1]["content"]
    assert "traversal" in results[2]["content"] and "root:" not in results[2]["content"]
    assert [e.status for e in events if isinstance(e, ToolCallFinished)] == ["fail"] * 3
    assert next(e for e in events if isinstance(e, TurnFinished)).status == "complete"


@override_settings(ACDC_MAX_TOOL_ROUNDS=2)
async def test_after_the_round_limit_the_model_must_answer(fake):
    session = await new_session()
    again = FakeStep(tool_calls=[tool("list_files", {})])
    fake.enqueue(again, again, again, FakeStep(text="Here is what I found."))
    events = await turn(session, "Explore")
    assert len(fake.requests) == 4
    assert fake.requests[-1].tools is None  # no more tools offered
    last = fake.requests[-1].messages[-1]
    assert last["role"] == "tool" and "Tool limit reached" in last["content"]
    notices = [e.text for e in events if isinstance(e, TurnNotice)]
    assert any("after 2 rounds" in text for text in notices)
    assert next(e for e in events if isinstance(e, TurnFinished)).text == "Here is what I found."


async def test_tool_cards_and_the_picker_update_reach_the_browser(fake):
    session = await new_session()
    ws = await connect(session.id)
    fake.enqueue(
        FakeStep(tool_calls=[tool("activate", {"id": "README.md"}, "a1")]),
        FakeStep(text="Activated the readme."),
    )
    await send(ws, message="Please activate the readme")
    frames = await frames_until(ws, 'data-status="complete"')
    text = "".join(frames)
    assert "tool-card status-running" in text and "tool-card status-ok" in text
    assert "activate(id=&#x27;README.md&#x27;)" in text
    # The picker follows: README.md's row drawn again, checked and flashing.
    update = next(f for f in frames if f.startswith('<div id="picker-update"'))
    assert re.search(r'class="picker-row file flash"[^>]*data-row="README.md"', update)
    assert '<input type="checkbox" aria-label="README.md" data-path="README.md" checked' in update
    # The total counts against the model's budget, though no HUD has named it yet.
    assert re.search(r"of [1-9][\d,]* tokens", update), update[-400:]
    # The card goes into the reply's body where the call was made (here before any text),
    # and the finished reply keeps that body instead of drawing the card a second time.
    started = next(f for f in frames if "tool-card status-running" in f)
    assert re.search(r'id="msg-\w+-body"[^>]*><details class="tool-card status-running', started)
    assert "hx-preserve" in frames[-1] and "tool-card " not in frames[-1]
    await ws.disconnect()
    page = await database_sync_to_async(lambda: Client().get(f"/s/{session.id}/"))()
    assert "tool-card status-ok" in page.content.decode()  # and after a reload


async def test_the_huds_file_count_includes_the_files_the_tools_activated(fake):
    session = await new_session()
    fake.enqueue(
        FakeStep(tool_calls=[tool("activate", {"id": "README.md"}, "a1")]),
        FakeStep(tool_calls=[tool("activate", {"id": "src/app.py"}, "a2")]),
        FakeStep(text="Both are in."),
    )
    events = await turn(session, "Activate the readme and the app")
    hud = next(e for e in reversed(events) if type(e).__name__ == "HudUpdate").hud
    assert hud["files"] == 2
    assert "Active files" in [s["label"] for s in hud["sections"]]


@pytest.mark.parametrize("odd", ["\0", "\ud800"])  # a NUL; half a character (a JSON escape)
async def test_nul_bytes_from_the_user_or_the_model_are_never_stored(fake, odd):
    session = await new_session()
    fake.enqueue(FakeStep(text=f"odd{odd}reply"))
    events = await turn(session, "hello\0 there")
    finished = next(e for e in events if isinstance(e, TurnFinished))
    assert finished.status == "complete" and finished.text == "odd\ufffdreply"
    contents = await database_sync_to_async(
        lambda: list(Message.objects.filter(session=session).values_list("content", flat=True))
    )()
    assert contents == ["hello there", "odd\ufffdreply"]


async def test_a_file_the_engine_drops_is_drawn_again_in_the_picker_without_a_flash(
    fake, served_root
):
    session = await new_session()  # a repository of its own: this test deletes a file
    fake.enqueue(
        FakeStep(tool_calls=[tool("activate", {"id": "README.md"}, "a1")]),
        FakeStep(text="In."),
        FakeStep(text="Gone."),
    )
    await turn(session, "Activate the readme")
    (served_root / "README.md").unlink()
    events = await turn(session, "And now?")
    notice = next(e for e in events if isinstance(e, TurnNotice) and e.paths)
    assert notice.paths == ("README.md",)
    changed = next(e for e in events if isinstance(e, SetsChanged))
    assert changed.paths == ("README.md",) and not changed.touched
    assert "README.md" not in changed.active
    assert events.index(notice) < events.index(changed)
