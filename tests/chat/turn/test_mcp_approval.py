"""A page's turn meets a call of an MCP tool that is not read-only: it shows the approval
card and waits; Run once runs it and its answer reaches the next request, Always allow is
remembered for the session's later calls of that tool, Deny and silence run nothing and say
so to the model. A server that sends notifications/tools/list_changed leaves the session's
`tools` byte-identical while search_tools finds (and call_tool calls) its new tool.

Real servers: the SDK server of `mcp_support`, over stdio in bubblewrap; the model is
`acdc/fake` through litellm. The person's answer is given as the page's view gives it.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from channels.db import database_sync_to_async

from chat.live.served import served
from chat.llm.fake import FakeStep
from chat.repo.mcp import asking, servers
from chat.turn.events import ToolCallFinished, ToolCallWaiting
from chat.turn.turns import TurnInput, TurnServices, run_turn
from tests.chat.sockets import new_session
from tests.chat.turn.mcp_support import declare_tiny

pytestmark = pytest.mark.django_db(transaction=True)
NOTE = {"id": "c1", "name": "mcp__tiny__note", "arguments": {"text": "hello"}}


@pytest.fixture
def mcp():
    connections = served().repository.mcp
    (connections.data_dir / servers.FILE_NAME).unlink(missing_ok=True)
    yield connections
    (connections.data_dir / servers.FILE_NAME).unlink(missing_ok=True)


class Page:
    """A page's turn: its events, and a wait for the card that asks."""

    def __init__(self) -> None:
        self.events: list = []
        self.asked: asyncio.Queue[int] = asyncio.Queue()

    async def emit(self, event) -> None:
        self.events.append(event)
        if isinstance(event, ToolCallWaiting) and event.proposal["status"] == "pending":
            await self.asked.put(event.proposal["id"])

    def start(self, session, text: str) -> asyncio.Task:
        sent = TurnInput(session.id, text, model="acdc/fake")
        services = TurnServices(emit=self.emit, wiring=served(), page_served=True)
        return asyncio.create_task(run_turn(sent, services))


async def answer(mcp, approval_id: int, decision: str) -> None:
    """What the page's view does: store the answer once, wake the waiting turn."""
    await database_sync_to_async(asking.claim)(approval_id, decision)
    mcp.approvals.answered(approval_id)


def tool_answers(request) -> list[str]:
    return [m["content"] for m in request.messages if m.get("role") == "tool"]


async def test_run_once_runs_the_call_and_its_answer_reaches_the_model(fake, served_root, mcp):
    declare_tiny(mcp.data_dir, served_root)
    session = await new_session()
    fake.enqueue(FakeStep(tool_calls=[NOTE]), FakeStep(text="Noted."))
    page = Page()
    try:
        running = page.start(session, "Leave a note.")
        asked = await asyncio.wait_for(page.asked.get(), 60)
        assert len(fake.requests) == 1  # the turn waits for the person
        await answer(mcp, asked, asking.ONCE)
        await asyncio.wait_for(running, 60)
    finally:
        await mcp.close()

    assert tool_answers(fake.requests[1]) == ["noted: hello"]
    [card] = [e for e in page.events if isinstance(e, ToolCallFinished)]
    assert (card.status, card.proposal["status"], card.proposal["mcp"]) == ("ok", "once", True)
    [waiting] = [e for e in page.events if isinstance(e, ToolCallWaiting)]
    assert waiting.proposal["arguments"] == {"text": "hello"}


async def test_always_allow_lets_the_tool_run_unasked_later_in_the_session(fake, served_root, mcp):
    declare_tiny(mcp.data_dir, served_root)
    session = await new_session()
    again = {**NOTE, "id": "c2", "arguments": {"text": "again"}}
    fake.enqueue(
        FakeStep(tool_calls=[NOTE]),
        FakeStep(text="Noted."),
        FakeStep(tool_calls=[again]),
        FakeStep(text="Noted again."),
    )
    page = Page()
    try:
        running = page.start(session, "Leave a note.")
        await answer(mcp, await asyncio.wait_for(page.asked.get(), 60), asking.ALWAYS)
        await asyncio.wait_for(running, 60)
        await asyncio.wait_for(page.start(session, "Another."), 60)
    finally:
        await mcp.close()

    assert tool_answers(fake.requests[3])[-1] == "noted: again"
    assert len([e for e in page.events if isinstance(e, ToolCallWaiting)]) == 1
    other = await new_session()  # another session asks again
    allowed = database_sync_to_async(asking.always_allowed)
    assert await allowed(session.id) == {"mcp__tiny__note"}
    assert await allowed(other.id) == frozenset()


async def test_deny_runs_nothing_and_the_model_is_told(fake, served_root, mcp):
    declare_tiny(mcp.data_dir, served_root)
    session = await new_session()
    fake.enqueue(FakeStep(tool_calls=[NOTE]), FakeStep(text="Fine."))
    page = Page()
    try:
        running = page.start(session, "Leave a note.")
        await answer(mcp, await asyncio.wait_for(page.asked.get(), 60), asking.DENY)
        await asyncio.wait_for(running, 60)
    finally:
        await mcp.close()

    assert tool_answers(fake.requests[1]) == ["denied by the person: mcp__tiny__note was not run"]
    [card] = [e for e in page.events if isinstance(e, ToolCallFinished)]
    assert (card.status, card.proposal["status"]) == ("fail", "denied")


async def test_no_answer_in_time_runs_nothing(fake, served_root, mcp, settings):
    settings.ACDC_MCP_APPROVAL_SECONDS = 1
    declare_tiny(mcp.data_dir, served_root)
    session = await new_session()
    fake.enqueue(FakeStep(tool_calls=[NOTE]), FakeStep(text="No answer."))
    page = Page()
    try:
        await asyncio.wait_for(page.start(session, "Leave a note."), 60)
    finally:
        await mcp.close()

    [told] = tool_answers(fake.requests[1])
    assert told.startswith("mcp__tiny__note was not run: the person did not answer within 1 s")


async def test_stop_ends_the_wait_as_stopped(fake, served_root, mcp):
    declare_tiny(mcp.data_dir, served_root)
    session = await new_session()
    fake.enqueue(FakeStep(tool_calls=[NOTE]), FakeStep(text="never"))
    page = Page()
    try:
        running = page.start(session, "Leave a note.")
        asked = await asyncio.wait_for(page.asked.get(), 60)
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
    finally:
        await mcp.close()

    row = await database_sync_to_async(asking.ToolApproval.objects.get)(pk=asked)
    assert row.status == "stopped"
    said = [e.proposal["status"] for e in page.events if isinstance(e, ToolCallWaiting)]
    assert said == ["pending", "stopped"]


async def test_list_changed_leaves_tools_alone_and_search_finds_the_new_tool(
    fake, served_root, mcp
):
    declare_tiny(mcp.data_dir, served_root)
    session = await new_session()
    fresh = {"name": "mcp__tiny__fresh_gauge", "arguments": {"unit": "bar"}}
    searching = {"id": "c2", "name": "search_tools", "arguments": {"query": "fresh"}}
    fake.enqueue(
        FakeStep(tool_calls=[{"id": "c1", "name": "mcp__tiny__grow", "arguments": {}}]),
        FakeStep(tool_calls=[searching]),
        FakeStep(tool_calls=[{"id": "c3", "name": "call_tool", "arguments": fresh}]),
        FakeStep(text="Seven bar."),
        FakeStep(text="Still the same tools."),
    )
    page = Page()
    try:
        await asyncio.wait_for(page.start(session, "Grow a tool and read it."), 60)
        await asyncio.wait_for(page.start(session, "And now?"), 60)
    finally:
        await mcp.close()

    grown, found, called = tool_answers(fake.requests[3])
    assert grown == "grown"
    assert [t["name"] for t in json.loads(found)] == ["mcp__tiny__fresh_gauge"]
    assert called == "fresh gauge: 7 bar"
    first = json.dumps(fake.requests[0].tools)
    assert "fresh_gauge" not in first
    assert all(json.dumps(r.tools) == first for r in fake.requests)
