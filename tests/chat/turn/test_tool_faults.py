"""A tool round's faults through the real turn, with `acdc/fake` scripted to call tools.

A path the filesystem refuses fails its tool call and the turn goes on to the model's
answer; a fault nobody foresaw in the round ends the turn as an error that is stored,
shown with its text and offered again (Retry), and the session can take the next turn.
"""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from django.test import Client

from chat.live.served import served
from chat.llm.fake import FakeStep
from chat.turn import toolrounds
from chat.turn.events import ToolCallFinished, TurnFinished
from chat.turn.turns import FAILED, TurnInput, TurnServices, run_turn
from history.models import Message
from tests.chat.sockets import new_session

pytestmark = pytest.mark.django_db(transaction=True)

LONG = "x" * 300


async def turn(session, text: str) -> tuple[TurnFinished, list]:
    events: list = []

    async def emit(event) -> None:
        events.append(event)

    finished = await run_turn(
        TurnInput(session_id=session.id, user_text=text, model="acdc/fake"),
        TurnServices(emit=emit, wiring=served()),
    )
    return finished, events


@database_sync_to_async
def replies(session) -> list[Message]:
    rows = Message.objects.filter(session=session, role=Message.Role.ASSISTANT)
    return list(rows.order_by("seq"))


async def test_an_over_long_path_fails_its_tool_call_and_the_turn_goes_on(fake):
    session = await new_session()
    calls = [
        {"id": f"c{i}", "name": name, "arguments": {key: LONG}}
        for i, (name, key) in enumerate(
            [("list_files", "path"), ("grep", "path"), ("activate", "id"), ("pin", "id")]
        )
    ]
    calls[1]["arguments"]["pattern"] = "hello"
    fake.enqueue(FakeStep(tool_calls=calls), FakeStep(text="None of those exist."))

    finished, events = await turn(session, "Look around")

    cards = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [c.status for c in cards] == ["fail"] * 4
    assert all("File name too long" in c.output for c in cards)
    assert finished.status == "complete" and finished.text == "None of those exist."
    answers = [m["content"] for m in fake.requests[-1].messages if m.get("role") == "tool"]
    assert len(answers) == 4 and all(a.startswith("Error: ") for a in answers)
    assert [r.status for r in await replies(session)] == ["complete"]


async def test_a_fault_in_a_tool_round_ends_the_turn_as_an_error_with_retry(fake, monkeypatch):
    session = await new_session()

    def broken(ctx, turn_id, call, at=0):  # stands in for a bug nobody has found yet
        raise RuntimeError("the disk went away")

    monkeypatch.setattr(toolrounds, "run_and_store", broken)
    fake.enqueue(
        FakeStep(text="Let me look.", tool_calls=[{"name": "list_files", "arguments": {}}])
    )

    finished, events = await turn(session, "Look around")

    assert finished.status == "error"
    assert finished.error == f"{FAILED}: the disk went away"
    assert [e for e in events if isinstance(e, TurnFinished)] == [finished]  # the page is told
    [reply] = await replies(session)
    assert (reply.status, reply.content, reply.error) == ("error", "Let me look.", finished.error)
    page = await database_sync_to_async(lambda: Client().get(f"/s/{session.id}/"))()
    html = page.content.decode()
    assert "The reply failed: Something went wrong on the server" in html
    assert "Retry" in html and "Streaming" not in html

    monkeypatch.undo()
    fake.enqueue(FakeStep(text="Back again."))
    again, _ = await turn(session, "Look around")  # the lease was given back
    assert again.status == "complete"
