"""Frames of a turn go straight to the tabs of the turn's own process, and through the
channel layer as soon as a tab elsewhere shows the session (chat/live/turnhost.py)."""

from __future__ import annotations

import asyncio

import pytest
from channels.layers import get_channel_layer

from chat.live import presence
from chat.live.turnhost import ask_snapshot
from chat.llm.fake import FakeStep
from chat.web.broadcast import session_group
from tests.chat.sockets import (
    WAIT,
    connect,
    eventually,
    frames_until,
    new_session,
    send,
    stored,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def group_frames(monkeypatch):
    """The chat frames handed to a session group's send (the layer still sends them)."""
    layer = get_channel_layer()
    sent: list[str] = []
    real = layer.group_send

    async def group_send(group, message):
        if group.startswith("session.") and message.get("type") == "chat.frame":
            sent.append(message["html"])
        await real(group, message)

    monkeypatch.setattr(layer, "group_send", group_send)
    return sent


async def receive_until(layer, channel: str, needle: str) -> list[str]:
    seen: list[str] = []
    async with asyncio.timeout(WAIT):
        while not seen or needle not in seen[-1]:
            message = await layer.receive(channel)
            if message["type"] == "chat.frame":  # the group's other messages are for consumers
                seen.append(message["html"])
    return seen


async def test_a_turn_whose_tabs_are_all_here_sends_no_frame_through_the_layer(fake, group_frames):
    fake.enqueue(FakeStep(text="Hello there, " * 20, chunk_size=8))
    session = await new_session()
    first, second = await connect(session.id), await connect(session.id)
    await send(first, message="Say hello")
    for tab in (first, second):
        frames = await frames_until(tab, 'data-status="complete"')
        assert "Say hello" in frames[0] and "Hello there," in frames[-1]
    assert group_frames == []
    await first.disconnect()
    await second.disconnect()


async def test_a_tab_elsewhere_gets_every_frame_through_the_layer(fake, group_frames):
    fake.enqueue(FakeStep(text="Hello there, " * 20, chunk_size=8))
    session = await new_session()
    here = await connect(session.id)
    layer = get_channel_layer()
    elsewhere = await layer.new_channel()  # as a tab on another worker would be
    await layer.group_add(session_group(session.id), elsewhere)
    await presence.joined(session.id, elsewhere)
    await send(here, message="Say hello")
    mine = await frames_until(here, 'data-status="complete"')
    theirs = await receive_until(layer, elsewhere, 'data-status="complete"')
    assert "Say hello" in theirs[0] and theirs[-1] == mine[-1]
    assert len(group_frames) >= 2
    await here.disconnect()


async def test_a_tab_elsewhere_joining_mid_turn_gets_the_snapshot_and_then_the_rest(
    fake, group_frames
):
    words = " ".join(f"w{n}" for n in range(200))
    fake.enqueue(FakeStep(text="para one.\n\n" + words, chunk_size=5, chunk_delay=0.01))
    session = await new_session()
    here = await connect(session.id)
    await send(here, message="Talk for a while")
    await frames_until(here, "para one.")
    assert group_frames == []  # until now every tab was here
    layer = get_channel_layer()
    late = await layer.new_channel()
    await layer.group_add(session_group(session.id), late)
    await ask_snapshot(session.id, late)
    theirs = await receive_until(layer, late, 'data-status="complete"')
    assert "para one." in theirs[0] and "w198 w199" in theirs[-1]
    await frames_until(here, 'data-status="complete"')
    _, answer = await stored(session)
    assert answer.status == "complete" and answer.content.endswith("w199")
    await here.disconnect()


async def test_a_tab_whose_snapshot_comes_after_the_turn_ended_gets_the_conversation(fake, served):
    # The finished frame carries no body (the tabs that followed the reply have it), so a
    # tab that drew the reply streaming and asks for its snapshot too late is drawn again.
    fake.enqueue(FakeStep(text="First block.\n\nThe rest of it.", chunk_size=4))
    session = await new_session()
    first = await connect(session.id)
    await send(first, message="Say it")
    await frames_until(first, 'data-status="complete"')

    async def hosted() -> bool:
        await asyncio.sleep(0.05)
        return served.host.running(session.id)

    assert not await eventually(hosted, lambda running: not running)  # after-turn work done
    before = set(served.tabs.of(session.id))
    late = await connect(session.id)

    async def joined() -> set[str]:
        await asyncio.sleep(0.05)
        return set(served.tabs.of(session.id)) - before

    (channel,) = await eventually(joined, bool)  # the socket is in once connect() has run
    await ask_snapshot(session.id, channel)  # as it asks when it joined mid-turn
    frames = await frames_until(late, "The rest of it.")
    assert "First block." in frames[-1] and 'id="conversation"' in frames[-1]
    await first.disconnect()
    await late.disconnect()
