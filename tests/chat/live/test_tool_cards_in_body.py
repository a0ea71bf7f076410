"""A tool card sits in the reply's body where the model called the tool: what it wrote
before the call reads above the card, what it wrote after reads below, as it streams, in
a joining tab's snapshot and once it has finished."""

from __future__ import annotations

from chat.live.frames import DeltaCoalescer
from chat.live.served import served
from chat.turn.events import ToolCallFinished, ToolCallStarted, TurnDelta, TurnFinished
from tests.chat.live.test_frames import Wire


def panel():
    """The Files panel's parts of the test's own served object (tests/conftest.py)."""
    return served().files


BEFORE = "Let me read app.py first."
AFTER = BEFORE + "\n\nIt greets by name."


def _order(html: str, *pieces: str) -> list[int]:
    return [html.index(piece) for piece in pieces]


async def _streamed_with_a_call(coalescer: DeltaCoalescer) -> None:
    await coalescer.emit(TurnDelta("t1", BEFORE))
    await coalescer.emit(ToolCallStarted("t1", "c1", "read_file", "read_file(path='app.py')"))
    args = ("read_file", "read_file(path='app.py')", "ok", "def greet(name): ...", "obj1")
    await coalescer.emit(ToolCallFinished("t1", "c1", *args))
    await coalescer.emit(TurnDelta("t1", AFTER))
    await coalescer.flush()


async def test_the_text_before_a_call_is_drawn_above_its_card():
    wire = Wire()
    coalescer = DeltaCoalescer(wire.send, panel(), interval=0.05)
    await _streamed_with_a_call(coalescer)
    text, started, finished, after = wire.sent
    assert BEFORE in text
    assert 'hx-swap-oob="beforebegin:#msg-t1-tail"' in started
    spots = _order(started, f"<p>{BEFORE}</p>", "tool-card status-running")
    assert spots == sorted(spots)
    assert "tool-card status-ok" in finished and 'hx-swap-oob="outerHTML:#tool-' in finished
    assert "It greets by name." in after and "tool-card" not in after


async def test_a_joining_tab_gets_the_card_between_the_texts():
    wire = Wire()
    coalescer = DeltaCoalescer(wire.send, panel(), interval=0.05)
    await _streamed_with_a_call(coalescer)
    (frame,) = coalescer.snapshot()
    spots = _order(frame, f"<p>{BEFORE}</p>", "tool-card status-ok", "It greets by name.")
    assert spots == sorted(spots)
    assert "status-running" not in frame  # the card as it finished


async def test_the_finished_reply_keeps_its_cards_in_the_body_once():
    wire = Wire()
    coalescer = DeltaCoalescer(wire.send, panel(), interval=0.05)
    await _streamed_with_a_call(coalescer)
    args = ("read_file", "read_file(path='app.py')", "ok", "def greet(name): ...", "obj1")
    card = ToolCallFinished("t1", "c1", *args)
    await coalescer.emit(TurnFinished("t1", "complete", AFTER, "m", tool_cards=(card,)))
    assert "tool-card " not in wire.sent[-1] and "hx-preserve" in wire.sent[-1]
    (late,) = coalescer.snapshot()  # a tab that joins after the end
    assert late.count("tool-card ") == 1
    spots = _order(late, f"<p>{BEFORE}</p>", "tool-card status-ok", "It greets by name.")
    assert spots == sorted(spots)
