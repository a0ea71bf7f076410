"""The turn host's queue: what waits behind a reply's after-work runs in the order it came.

The hosted work itself is replaced by steps the test releases one at a time (the turns and
compactions are tested over the socket elsewhere); what is under test is the handing over.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from chat.live.protocol import parse_frame
from chat.live.turnhost import TurnHost
from tests.chat.sockets import WAIT

SESSION = "s1"


def frame(**fields):
    return parse_frame(json.dumps(fields), None, max_bytes=10_000)


class Scripted(TurnHost):
    """Each piece of work records its start, says its reply is out, and ends when released."""

    def __init__(self, served) -> None:
        parts = served.tabs, served.runtime, served.maps, served.files
        super().__init__(*parts, repository=served.repository, histories=served.histories)
        self.started: list[str] = []
        self.release: dict[str, asyncio.Event] = {}
        self.refused: list[str] = []

    async def _work(self, name: str, hosted) -> None:
        self.started.append(name)
        self.release[name] = asyncio.Event()
        hosted.after_reply = True  # as a turn does when its reply is finished
        await self.release[name].wait()

    async def _turn(self, session_id, hosted, message):
        await self._work(message.text, hosted)

    async def _compact(self, session_id, hosted, focus):
        await self._work("compact", hosted)


async def until(condition, timeout: float = WAIT) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0)


@pytest.fixture
def refusals(monkeypatch):
    told: list[str] = []

    async def tell(channel, text):
        told.append(text)

    monkeypatch.setattr("chat.live.turnhost._tell", tell)
    return told


async def test_a_message_sent_as_a_turn_ends_cannot_overtake_a_waiting_compaction(refusals, served):
    host = Scripted(served)
    await host.submit(SESSION, frame(message="first"), "tab")
    await until(lambda: host.started == ["first"])
    await host.submit(SESSION, frame(action="compact"), "tab")  # waits for the first turn
    first = host._hosted[SESSION].task
    host.release["first"].set()
    await first
    # The first turn is over and the compaction has not run a step yet: a new message here
    # still goes behind it.
    await host.submit(SESSION, frame(message="second"), "tab")
    await until(lambda: host.started == ["first", "compact"])
    host.release["compact"].set()
    await until(lambda: host.started == ["first", "compact", "second"])
    host.release["second"].set()
    await until(lambda: not host.running(SESSION))
    assert refusals == []


async def test_a_message_while_a_reply_streams_is_refused_and_nothing_waits(refusals, served):
    host = Scripted(served)

    async def streaming(session_id, hosted, message):
        host.started.append(message.text)
        host.release[message.text] = asyncio.Event()
        await host.release[message.text].wait()  # the reply is not out yet

    host._turn = streaming
    await host.submit(SESSION, frame(message="first"), "tab")
    await until(lambda: host.started == ["first"])
    await host.submit(SESSION, frame(message="second"), "tab")
    await host.submit(SESSION, frame(message="third"), "other tab")
    assert refusals == [
        "A reply is still being written; wait for it or press Stop.",
        "A reply is still being written in another tab; wait for it or press Stop.",
    ]
    host.release["first"].set()
    await until(lambda: not host.running(SESSION))
    assert host.started == ["first"]


async def test_stop_ends_the_running_work_and_what_waits_still_runs(refusals, served):
    host = Scripted(served)
    await host.submit(SESSION, frame(action="compact"), "tab")
    await until(lambda: host.started == ["compact"])
    await host.submit(SESSION, frame(message="queued"), "tab")
    host.stop(SESSION)
    await until(lambda: host.started == ["compact", "queued"])
    host.release["queued"].set()
    await until(lambda: not host.running(SESSION))
    assert refusals == []
