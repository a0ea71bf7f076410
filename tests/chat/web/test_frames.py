from __future__ import annotations

import asyncio
import json

from chat.turn.events import SetsChanged, TurnDelta, TurnFinished, TurnNotice, TurnStarted
from chat.web.frames import DeltaCoalescer, render_event


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_fast_deltas_are_merged_and_the_last_state_always_arrives():
    sent: list[str] = []

    async def send(html: str) -> None:
        sent.append(html)

    coalescer = DeltaCoalescer(send, interval=0.05)
    await coalescer.emit(TurnStarted("t1", "s", "m", "hi", "acdc/fake"))
    for n in range(1, 101):
        await coalescer.emit(TurnDelta("t1", "word " * n))
    await coalescer.emit(TurnFinished("t1", "complete", "word " * 100, "m2"))
    deltas = [h for h in sent if 'id="msg-t1-body"' in h and "data-status" not in h]
    assert 1 <= len(deltas) < 10
    assert "word " * 100 in sent[-1].replace("\n", " ") or "word word" in sent[-1]
    assert 'data-status="complete"' in sent[-1]


async def test_deltas_are_sent_in_order_before_the_finish():
    sent: list[str] = []

    async def send(html: str) -> None:
        sent.append(html)

    clock = FakeClock()
    coalescer = DeltaCoalescer(send, interval=0.05, clock=clock)
    await coalescer.emit(TurnDelta("t1", "a"))
    await asyncio.sleep(0)
    await coalescer.emit(TurnDelta("t1", "ab"))
    await coalescer.emit(TurnFinished("t1", "cancelled", "ab", "m"))
    bodies = [h for h in sent if "msg-t1-body" in h]
    assert ">a<" in bodies[0]
    assert 'data-status="cancelled"' in sent[-1]
    assert "Stopped" in sent[-1]


def test_every_frame_carries_the_turn_id():
    events = [
        TurnStarted("t9", "s", "m", "hi", "acdc/fake"),
        TurnDelta("t9", "x"),
        TurnFinished("t9", "error", "x", "m", error="provider down"),
        TurnNotice("t9", "Removed big.txt", paths=("big.txt",)),
        SetsChanged("t9", ("README.md",), active=("README.md",)),
    ]
    for event in events:
        for message in render_event(event):
            assert 'data-turn="t9"' in message or '"turn":"t9"' in message


def test_files_panel_changes_are_json_messages_of_their_own():
    notice, update = render_event(TurnNotice("t3", "Removed big.txt", paths=("big.txt",)))
    assert notice.startswith("<div") and "Removed big.txt" in notice
    assert json.loads(update) == {
        "type": "picker",
        "turn": "t3",
        "update": {"uncheck": ["big.txt"]},
    }


def test_a_failed_turn_shows_its_error_and_keeps_the_partial_text():
    (html,) = render_event(
        TurnFinished("t1", "error", "half an answer", "m", error="Rate limited.")
    )
    assert "half an answer" in html
    assert "Rate limited." in html
    assert 'role="alert"' in html
