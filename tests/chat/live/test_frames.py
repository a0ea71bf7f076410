from __future__ import annotations

import asyncio
import re
import threading

import pytest

from chat.live import stream
from chat.live.frames import DeltaCoalescer, render_event
from chat.live.served import served
from chat.turn.events import (
    SetsChanged,
    ToolCallFinished,
    ToolCallStarted,
    TurnDelta,
    TurnFinished,
    TurnNotice,
    TurnRetrying,
    TurnStarted,
)
from chat.web.panels.fileupdates import row_key
from contextcore.llm import Retrying
from history.markup.render import render_markdown


def panel():
    """The Files panel's parts of the test's own served object (tests/conftest.py)."""
    return served().files


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Wire:
    """What the coalescer sent, with a wait on what should arrive (never a fixed sleep)."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self._changed = asyncio.Condition()

    async def send(self, message: str) -> None:
        async with self._changed:
            self.sent.append(message)
            self._changed.notify_all()

    async def wait_for(self, predicate, timeout: float = 60) -> None:
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: predicate(self.sent)), timeout)


class BlockedRenderer:
    """A renderer that waits until the test lets it go, and notes the thread it ran on."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.go = threading.Event()
        self.threads: set[int] = set()

    def __call__(self, source: str) -> str:
        self.threads.add(threading.get_ident())
        self.entered.set()
        assert self.go.wait(120), "the test never let the renderer go"
        return render_markdown(source)


async def test_fast_deltas_are_merged_and_the_last_state_always_arrives():
    wire = Wire()
    coalescer = DeltaCoalescer(wire.send, panel(), interval=0.05)
    await coalescer.emit(TurnStarted("t1", "s", "m", "hi", "acdc/fake"))
    for n in range(1, 101):
        await coalescer.emit(TurnDelta("t1", "word " * n))
    await coalescer.emit(TurnFinished("t1", "complete", "word " * 100, "m2"))
    started, *deltas, finished = wire.sent
    assert len(deltas) == 1
    assert "word " * 99 in deltas[0]
    assert 'data-status="complete"' in finished


async def test_a_delta_goes_out_on_its_own_within_the_interval():
    wire = Wire()
    coalescer = DeltaCoalescer(wire.send, panel(), interval=0.05)
    await coalescer.emit(TurnDelta("t1", "Hello"))
    await wire.wait_for(lambda sent: len(sent) == 1)
    await coalescer.emit(TurnDelta("t1", "Hello there"))
    await wire.wait_for(lambda sent: len(sent) == 2)
    assert ">Hello</div>" in wire.sent[0] and "> there</span>" in wire.sent[1]


async def test_a_due_delta_that_only_grows_the_tail_is_sent_in_line_without_a_task():
    """At a provider's pace every delta is due: growing the tail is string work, sent as
    emit runs, with no task made for it (a cost of every chunk of every reply)."""
    wire, clock = Wire(), FakeClock()
    coalescer = DeltaCoalescer(wire.send, panel(), interval=0.05, clock=clock)
    await coalescer.emit(TurnDelta("t1", "Hello"))
    await wire.wait_for(lambda sent: len(sent) == 1)  # the first frame draws the body
    loop, made = asyncio.get_running_loop(), []
    factory = loop.get_task_factory()
    loop.set_task_factory(lambda lp, coro, **kw: made.append(coro) or asyncio.Task(coro, loop=lp))
    try:
        for n, text in enumerate(["Hello there", "Hello there, you", "Hello there, you!"], 2):
            clock.now += 0.12
            await coalescer.emit(TurnDelta("t1", text))
            assert len(wire.sent) == n
    finally:
        loop.set_task_factory(factory)
    assert made == []
    assert "> there</span>" in wire.sent[1] and ">!</span>" in wire.sent[3]


async def test_a_retry_counts_down_in_the_reply_until_the_answer_starts():
    wire = Wire()
    coalescer = DeltaCoalescer(wire.send, panel(), interval=0.05, clock=FakeClock())
    await coalescer.emit(TurnStarted("t1", "s", "m", "hi", "acdc/fake"))
    retry = TurnRetrying.of("t1", Retrying("Rate limited by the provider", 2.5, 2, 4))
    assert retry.text == "Rate limited by the provider; retrying in 3 s (attempt 2 of up to 4)"
    await coalescer.emit(retry)
    note = wire.sent[-1]
    assert 'id="msg-t1-retry"' in note and 'data-retry-seconds="3"' in note
    assert "(attempt 2 of up to 4)" in note and " hidden" not in note
    await coalescer.emit(TurnDelta("t1", "Here"))
    await wire.wait_for(lambda sent: len(sent) == 4)
    cleared, answer = wire.sent[2:]
    assert 'id="msg-t1-retry"' in cleared and " hidden" in cleared
    assert "Here" in answer
    await coalescer.emit(TurnDelta("t1", "Here it is"))
    await wire.wait_for(lambda sent: len(sent) == 5)  # the note is hidden once, not again
    assert "retry" not in wire.sent[-1]


async def test_deltas_are_sent_in_order_before_the_finish():
    wire = Wire()
    coalescer = DeltaCoalescer(wire.send, panel(), interval=0.05, clock=FakeClock())
    await coalescer.emit(TurnDelta("t1", "a"))
    await wire.wait_for(lambda sent: len(sent) == 1)
    await coalescer.emit(TurnDelta("t1", "ab"))
    await coalescer.emit(TurnFinished("t1", "cancelled", "ab", "m"))
    assert ">a</div>" in wire.sent[0]
    assert ">b</span>" in wire.sent[1]
    assert 'data-status="cancelled"' in wire.sent[-1]
    assert "Stopped" in wire.sent[-1]


async def test_emit_returns_at_once_while_the_renderer_is_busy():
    wire, renderer = Wire(), BlockedRenderer()
    coalescer = DeltaCoalescer(wire.send, panel(), interval=0.05, render=renderer)
    await coalescer.emit(TurnDelta("t1", "First paragraph.\n\nSecond"))
    await asyncio.to_thread(renderer.entered.wait, 60)
    for n in range(1, 50):
        await asyncio.wait_for(coalescer.emit(TurnDelta("t1", "First paragraph.\n\n" + "x" * n)), 5)
    assert wire.sent == []
    renderer.go.set()
    await coalescer.emit(TurnFinished("t1", "complete", "First paragraph.\n\n" + "x" * 49, "m"))
    assert threading.get_ident() not in renderer.threads
    assert "<p>First paragraph.</p>" in wire.sent[0]
    assert 'data-status="complete"' in wire.sent[-1]


async def test_a_finished_event_waits_for_the_frame_being_rendered():
    wire, renderer = Wire(), BlockedRenderer()
    coalescer = DeltaCoalescer(wire.send, panel(), interval=0.05, render=renderer)
    await coalescer.emit(TurnDelta("t1", "Para one.\n\nPara two"))
    await asyncio.to_thread(renderer.entered.wait, 60)
    finish = asyncio.create_task(
        coalescer.emit(TurnFinished("t1", "complete", "Para one.\n\nPara two.", "m"))
    )
    notice = TurnNotice("t1", "Budget nearly spent", level="warning")
    await asyncio.sleep(0)
    assert not finish.done() and wire.sent == []
    renderer.go.set()
    await asyncio.wait_for(finish, 60)
    await coalescer.emit(notice)
    body, finished, shown_notice = wire.sent
    assert "<p>Para one.</p>" in body
    assert 'data-status="complete"' in finished
    assert "Budget nearly spent" in shown_notice


async def test_the_snapshot_brings_a_joining_tab_up_to_date():
    wire = Wire()
    coalescer = DeltaCoalescer(wire.send, panel(), interval=0.05)
    assert coalescer.snapshot() == []
    await coalescer.emit(TurnDelta("t1", "# Title\n\nSome text"))
    await coalescer.flush()
    (frame,) = coalescer.snapshot()
    assert frame.startswith('<div class="body" id="msg-t1-body"')
    assert "<h1>Title</h1>" in frame and ">Some text</div>" in frame
    joined = Wire()
    await coalescer.send_snapshot(joined.send)
    assert joined.sent == [frame]
    await coalescer.emit(TurnFinished("t1", "complete", "# Title\n\nSome text.", "m"))
    (late,) = coalescer.snapshot()  # a tab that joins after the end gets the whole reply
    assert 'id="msg-t1"' in late and 'data-status="complete"' in late
    assert "<h1>Title</h1>" in late and "<p>Some text.</p>" in late
    assert "hx-preserve" not in late


async def test_the_finished_frame_leaves_the_streamed_body_and_completes_its_tail():
    wire = Wire()
    coalescer = DeltaCoalescer(wire.send, panel(), interval=0.05, clock=FakeClock())
    opening = "A first paragraph that the tab already has.\n\n"
    await coalescer.emit(TurnDelta("t1", opening + "The last one"))
    await coalescer.flush()
    await coalescer.emit(TurnFinished("t1", "error", opening + "The last one.", "m", error="Down."))
    finished = wire.sent[-1]
    assert "A first paragraph" not in finished
    assert 'id="msg-t1-body" hx-preserve="true"></div>' in finished
    assert 'hx-swap-oob="beforebegin:#msg-t1-tail"' in finished
    assert "<p>The last one.</p>" in finished
    assert 'hx-swap-oob="delete:#msg-t1-tail"' in finished
    assert 'hx-swap-oob="beforeend:#msg-t1-body"' in finished and "Down." in finished
    assert 'data-status="error"' in finished


async def test_a_reply_that_never_streamed_finishes_with_its_body():
    wire = Wire()
    coalescer = DeltaCoalescer(wire.send, panel(), interval=0.05)
    await coalescer.emit(TurnFinished("t1", "error", "", "m", error="Rate limited."))
    (finished,) = wire.sent
    assert "hx-preserve" not in finished and "Rate limited." in finished


async def test_each_block_is_rendered_once_from_the_first_delta_to_the_finished_frame():
    rendered: list[str] = []

    def render(source: str) -> str:
        rendered.append(source)
        return render_markdown(source)

    wire = Wire()
    coalescer = DeltaCoalescer(wire.send, panel(), interval=0.05, clock=FakeClock(), render=render)
    text = "".join(
        f"Paragraph {n} of the answer.\n\n```python\nx = {n}\n```\n\n" for n in range(30)
    )
    for end in range(7, len(text), 7):
        await coalescer.emit(TurnDelta("t1", text[:end]))
        await coalescer.flush()
    await coalescer.emit(TurnFinished("t1", "complete", text, "m"))
    assert "".join(rendered) == text  # every character went through markdown once
    assert len(rendered) == 60  # one render per block, the last ones with the finish


async def test_a_frame_that_only_grows_the_tail_renders_no_template():
    counted: list[str] = []
    wire = Wire()
    coalescer = DeltaCoalescer(wire.send, panel(), interval=0.05, clock=FakeClock())
    await coalescer.emit(TurnDelta("t7", "Start"))
    await coalescer.flush()
    original = stream.render_to_string
    stream.render_to_string = lambda name, context: counted.append(name) or original(name, context)
    try:
        for n in range(1, 200):
            await coalescer.emit(TurnDelta("t7", "Start" + " word" * n))
            await coalescer.flush()
    finally:
        stream.render_to_string = original
    assert len(wire.sent) == 200
    assert counted == ["chat/_frame_added.html"]  # once for the turn, then filled in


async def test_text_that_shows_nothing_new_waits_for_the_next_frame():
    wire = Wire()
    coalescer = DeltaCoalescer(wire.send, panel(), interval=0.05, clock=FakeClock())
    for text in ("Hello", "Hello ", "Hello  \n", "Hello  \nthere"):
        await coalescer.emit(TurnDelta("t1", text))
        await coalescer.flush()
    assert len(wire.sent) == 2
    assert ">  \nthere</span>" in wire.sent[1]


async def test_frames_go_out_at_most_twenty_a_second():
    clock = FakeClock()
    ticked = asyncio.Condition()

    async def sleep(seconds: float) -> None:  # until the fake clock has moved on as far
        deadline = clock.now + seconds
        async with ticked:
            await ticked.wait_for(lambda: clock.now >= deadline)

    wire = Wire()
    coalescer = DeltaCoalescer(wire.send, panel(), interval=0.05, clock=clock, sleep=sleep)
    started = clock.now
    for n in range(1, 1001):  # a delta every 2 ms of the fake clock: 2 seconds of them
        async with ticked:
            clock.now += 0.002
            ticked.notify_all()
        await coalescer.emit(TurnDelta("t1", "word " * n))
        for _ in range(3):
            await asyncio.sleep(0)  # the timer wakes and sends when the loop gets turns
    await coalescer.flush()
    elapsed = clock.now - started
    assert 20 <= len(wire.sent) <= 20 * elapsed + 1
    assert wire.sent[-1].endswith("word </span>")


def test_every_frame_carries_the_turn_id():
    events = [
        TurnStarted("t9", "s", "m", "hi", "acdc/fake"),
        TurnDelta("t9", "x"),
        TurnFinished("t9", "error", "x", "m", error="provider down"),
        TurnNotice("t9", "Removed big.txt", paths=("big.txt",)),
        SetsChanged("t9", ("README.md",), active=("README.md",), root=served().repository.path),
    ]
    for event in events:
        for message in render_event(event, panel()):
            assert 'data-turn="t9"' in message or '"turn":"t9"' in message


@pytest.mark.usefixtures("served_root")
def test_the_tools_changes_to_the_files_panel_are_its_rows_drawn_again():
    (notice,) = render_event(TurnNotice("t3", "Removed big.txt", paths=("big.txt",)), panel())
    assert notice.startswith("<div") and "Removed big.txt" in notice
    (update,) = render_event(
        SetsChanged(
            "t3",
            ("README.md",),
            active=("README.md",),
            budget=500,
            root=served().repository.path,
        ),
        panel(),
    )
    assert update.startswith('<div id="picker-update" hx-swap-oob="true" hidden data-selection=""')
    assert f'<i id="s{row_key("README.md")}" data-sel="on" hidden>' in update
    assert re.search(r'class="picker-row file flash"[^>]*data-row="README.md"', update)
    assert "of 500 tokens" in update and not update.startswith("{")


def test_a_failed_turn_shows_its_error_and_keeps_the_partial_text():
    (html,) = render_event(
        TurnFinished("t1", "error", "half an answer", "m", error="Rate limited."), panel()
    )
    assert "half an answer" in html
    assert "Rate limited." in html
    assert 'role="alert"' in html


def tool_round(call_id: str, tool: str, display: str, object_id: str) -> tuple[str, str]:
    """The running card's frame and the finished card's frame of one tool call."""
    (running,) = render_event(ToolCallStarted("t1", call_id, tool, f"{tool}(…)"), panel())
    finished_event = ToolCallFinished("t1", call_id, tool, display, "ok", "out", object_id)
    (finished,) = render_event(finished_event, panel())
    return running, finished


def card_attributes(html: str) -> dict[str, str]:
    tag = re.search(r"<details[^>]*>", html).group(0)
    return dict(re.findall(r'([\w-]+)="([^"]*)"', tag))


def test_rounds_that_reuse_a_call_id_get_cards_of_their_own():
    # A provider may reuse an id from round to round; the stored toolcall objects differ.
    first = tool_round("call_0", "list_files", "list_files(path='.')", "toolcall:s:call_0")
    second = tool_round("call_0", "read_file", "read_file(path='a.py')", "toolcall:s:call_0-1a2b3c")
    (run_1, done_1), (run_2, done_2) = [map(card_attributes, pair) for pair in (first, second)]
    assert done_1["id"] != done_2["id"]
    assert run_2["id"] not in (done_1["id"], done_2["id"])  # never mistaken for round 1's
    # Each finished card takes the place of its running card (or of itself, if a tab
    # that loaded the page mid-call already shows it).
    for run, done in [(run_1, done_1), (run_2, done_2)]:
        assert done["hx-swap-oob"] == f"outerHTML:#{run['id']},#{done['id']}"


def test_the_finished_reply_redraws_each_card_under_the_id_it_had():
    (live,) = render_event(
        TurnFinished(
            "t1",
            "complete",
            "ok",
            "m",
            tool_cards=(
                ToolCallFinished(
                    "t1", "c", "grep", "grep(pattern='a_b')", "ok", "", "toolcall:s:c"
                ),
            ),
        ),
        panel(),
    )
    (frame,) = render_event(
        ToolCallFinished("t1", "c", "grep", "grep(pattern='a_b')", "ok", "", "toolcall:s:c"),
        panel(),
    )
    assert card_attributes(live)["id"] == card_attributes(frame)["id"]


def test_a_card_shows_the_tool_name_once_and_the_arguments_verbatim():
    display = "read_file(path='src/snake_case_<util>.py')"
    _, finished = tool_round("c1", "read_file", display, "toolcall:s:c1")
    summary = re.search(r"<summary>(.*)</summary>", finished, re.S).group(1)
    text = re.sub(r"<[^>]+>", "", summary)
    assert text.count("read_file") == 1
    assert "read_file(path=&#x27;src/snake_case_&lt;util&gt;.py&#x27;)" in text
    assert "<em>" not in summary


def test_a_cut_argument_display_ends_with_an_ellipsis():
    _, finished = tool_round("c1", "grep", "grep(pattern='" + "x" * 190, "toolcall:s:c1")
    assert "x…</span>)" in finished
