"""Keeping the cache warm for an open tab, through the real websocket: after a turn the
session's loop sends the planned refreshes (on a fake clock) and every tab is told what
each read and cost; closing the last tab ends the loop before anything is sent."""

from __future__ import annotations

import asyncio
import time

import pytest

from chat.llm.fake import FakeStep
from chat.session.keepalive import PURPOSE
from tests.chat.sockets import WAIT, connect, eventually, frames_until, new_session, send

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "Why does the parser fail here?\n" + "ERROR parser: unexpected token at 12:4\n" * 150


class FakeClock:
    """The warmer's clock: the wall clock plus whatever it has slept, at once."""

    def __init__(self) -> None:
        self.ahead = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return time.time() + self.ahead

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.ahead += seconds
        await asyncio.sleep(0)


@pytest.fixture
def keep_warm(settings):
    settings.ACDC_KEEP_WARM = True


async def _two_turns(fake, ws) -> None:
    for question in (QUESTION, "And how do I fix it?"):
        fake.enqueue(FakeStep(text="It reads tokens, then " + "builds a tree " * 100))
        await send(ws, message=question)
        await frames_until(ws, 'data-status="complete"')


def _refreshes(fake) -> int:
    return sum(1 for r in fake.requests if r.metadata.get("purpose") == PURPOSE)


async def test_an_open_tab_has_its_cache_refreshed_and_is_told(fake, keep_warm, served):
    clock = FakeClock()
    served.warmer.clock, served.warmer.sleep = clock, clock.sleep  # the test's own warmer
    session = await new_session()
    ws = await connect(session.id)
    await _two_turns(fake, ws)

    frames = await frames_until(ws, 'data-keepalive="1"')
    said = frames[-1]
    assert "Kept the conversation cached while you were away" in said
    assert 'id="hud"' in said  # the HUD counts what it cost
    assert 0 < clock.slept[0] <= 300  # sent before the five minutes ran out
    await frames_until(ws, 'data-keepalive="2"')
    assert _refreshes(fake) >= 2
    # The plan ran out: the loop ended by itself.
    assert not await eventually(_loop_of(served, session.id), lambda running: not running)
    await ws.disconnect()


async def test_closing_the_last_tab_ends_the_loop_before_it_sends(fake, keep_warm, served):
    gate = asyncio.Event()

    async def held(seconds: float) -> None:
        await gate.wait()

    served.warmer.sleep = held
    session = await new_session()
    ws = await connect(session.id)
    await _two_turns(fake, ws)
    assert await eventually(_loop_of(served, session.id), bool)

    await ws.disconnect()

    assert not served.warmer.running(session.id)
    gate.set()
    await asyncio.wait_for(asyncio.sleep(0), WAIT)
    assert _refreshes(fake) == 0


def _loop_of(served, session_id: str):
    async def running() -> bool:
        return served.warmer.running(session_id)

    return running
