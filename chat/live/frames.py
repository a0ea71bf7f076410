"""Turn events rendered as htmx out-of-band HTML frames, coalesced for the wire.

Every HTML frame is rendered from a template under `templates/chat/` and carries the turn
id; the Files panel's rows the model's tools changed are drawn again (`sets_frame`).
What the pages draw too (tool cards, the HUD, that message) is `chat.web.fragments`'.
Answer updates are coalesced: at most one frame per `interval` (~20 a second), each
carrying only what is new (`stream.py`), so a slow browser never falls behind a fast
model and the last state always arrives. A frame that parses or renders markdown is made
in a worker thread (the event loop never waits for Pygments); one that only grows the
tail is a few string operations, made in line. The finished frame of a streamed reply
replaces its header and status and puts the rendered rest where the tail was: the body
the tabs have stays, with the tool cards where the model called the tools. A retry of the
provider shows as a note in the reply, counting down (`retry_frame`), which the first
frame of the answer that follows takes away.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

from django.template.loader import render_to_string

from chat.live.stream import (
    Render,
    StreamState,
    advance,
    cut,
    due,
    finish,
    snapshot,
    with_block,
)
from chat.repo.listings import FilesPanel
from chat.session.sets import Selection
from chat.turn.events import (
    HudUpdate,
    SetsChanged,
    ToolCallFinished,
    ToolCallOutput,
    ToolCallStarted,
    ToolCallWaiting,
    TurnDelta,
    TurnEvent,
    TurnFinished,
    TurnNotice,
    TurnRetrying,
    TurnStarted,
)
from chat.web.fragments import card, live_output
from chat.web.panels.selection import sets_update
from history.markup.render import render_markdown

Send = Callable[[str], Awaitable[None]]


def render_event(event: TurnEvent, panel: FilesPanel) -> list[str]:
    """The websocket messages for one turn event, in order: HTML fragments (the Files
    panel's are taken by picker.js before htmx would swap them)."""
    if isinstance(event, SetsChanged):
        return [sets_frame(event, panel)]
    return [_render_html(event)]


def sets_frame(event: SetsChanged, panel: FilesPanel) -> str:
    """The Files panel's rows of the files the event names, drawn again with the folders'
    three states and the total (`selection.sets_update`); the model's rows flash."""
    active = frozenset(event.active)
    chosen = Selection(active, frozenset(event.outlines) & active, frozenset(event.pinned))
    chosen = replace(chosen, shed=frozenset(event.shed) & active, budget=event.budget)
    repo = Path(event.root)
    touched, turn_id = event.touched, event.turn_id
    return sets_update(panel, repo, event.paths, chosen, flash=touched, turn_id=turn_id)


def _render_html(event: TurnEvent) -> str:
    if isinstance(event, TurnRetrying):
        return retry_frame(event.turn_id, event)
    if isinstance(event, TurnStarted):
        return render_to_string("chat/_frame_started.html", {"event": event})
    if isinstance(event, TurnDelta):
        return advance(StreamState(event.turn_id), event.text)[1]
    if isinstance(event, TurnNotice):
        return render_to_string("chat/_frame_notice.html", {"event": event})
    if isinstance(event, TurnFinished):
        return finished_frame(event, render_markdown(event.text))
    if isinstance(event, HudUpdate):
        return render_to_string("chat/_hud.html", {"hud": event.hud, "oob": True})
    if isinstance(event, ToolCallOutput):
        return render_to_string("chat/_tool_live.html", {"live": live_output(event), "oob": True})
    if isinstance(event, ToolCallStarted | ToolCallWaiting | ToolCallFinished):
        return render_to_string("chat/_frame_tool.html", {"event": event, "card": card(event)})
    raise TypeError(f"not a turn event: {event!r}")


def finished_frame(
    event: TurnFinished, html: str, rest: str | None = None, *, cards_in_body: bool = False
) -> str:
    """The reply as it ended. With `rest` (the tabs have its streamed body: `stream.finish`),
    the body stays and `rest` takes the tail's place; else the body is `html`, whole. The
    tool cards are drawn above the body only when it does not hold them where they were
    called (a streamed body holds them: `stream.cut`)."""
    inside = cards_in_body or rest is not None
    cards = [] if inside else [card(c) for c in event.tool_cards]
    context = {"event": event, "html": html, "rest": rest, "cards": cards}
    return render_to_string("chat/_frame_finished.html", context)


def retry_frame(turn_id: str, retry: TurnRetrying | None = None) -> str:
    """The reply's retry note (`msg-<turn>-retry`): the reason and a countdown from the
    seconds it carries (chat.js counts it down in the page), or, without `retry`, hidden."""
    seconds = math.ceil(retry.delay) if retry is not None else 0
    context = {"turn_id": turn_id, "retry": retry, "seconds": seconds, "oob": True}
    return render_to_string("chat/_retry_note.html", context)


class DeltaCoalescer:
    """Forwards the events of one turn to `send`, in order, coalescing answer deltas.

    `emit(TurnDelta)` records the latest text and sends one frame per `interval` at most, so
    neither a slow renderer nor a slow tab holds up the model's stream: a frame that is due
    and only grows the tail (string work) goes out at once, in line; one with markdown to
    parse or render is made in a worker thread by a timer, as is any frame not yet due or
    behind another. Any other event first flushes the pending text, then goes
    out after it. `snapshot()` draws the answer for a tab that joins while it streams, or
    the finished reply, whole, for one that joins after it ended.
    """

    def __init__(
        self,
        send: Send,
        panel: FilesPanel,
        interval: float = 0.05,
        clock: Callable[[], float] = time.monotonic,
        render: Render = render_markdown,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        self._send = send
        self._panel = panel  # the Files panel's rows a SetsChanged draws again
        self._interval = interval
        self._clock = clock
        self._render = render
        self._sleep = sleep
        self._latest: TurnDelta | None = None
        self._state: StreamState | None = None
        # The event, its whole body, and whether the body holds the tool cards.
        self._finished: tuple[TurnFinished, str, bool] | None = None
        self._cards: dict[str, int] = {}  # a running card's DOM id: its index among the blocks
        self._timer: asyncio.Task | None = None
        self._last_sent = float("-inf")
        self._sending = asyncio.Lock()  # one frame at a time, in order
        self._retry_shown: str | None = None  # the turn whose retry note the tabs show

    async def emit(self, event: TurnEvent) -> None:
        if isinstance(event, TurnDelta):
            self._latest = event
            if self._timer is None:
                delay = max(0.0, self._last_sent + self._interval - self._clock())
                if delay or self._sending.locked() or self._rendering(event):
                    self._timer = asyncio.ensure_future(self._flush_after(delay))
                else:  # due now, and only string work: sent in line, with no task for it
                    await self.flush(in_line=True)
            return
        await self.flush()
        async with self._sending:
            if isinstance(event, ToolCallStarted | TurnFinished):
                await self._clear_retry(send=not isinstance(event, TurnFinished))
            if isinstance(event, TurnFinished):
                messages = [await asyncio.to_thread(self._finish, event)]
            elif isinstance(event, ToolCallStarted | ToolCallWaiting | ToolCallFinished):
                messages = [await asyncio.to_thread(self._tool_frame, event)]
            else:
                messages = await asyncio.to_thread(render_event, event, self._panel)
            if isinstance(event, TurnRetrying):
                self._retry_shown = event.turn_id
            for message in messages:
                await self._send(message)

    def _rendering(self, event: TurnDelta) -> bool:
        """Whether the frame for `event` would parse or render markdown (`stream.due`)."""
        return due(self._state_of(event.turn_id), event.text)

    def _state_of(self, turn_id: str) -> StreamState:
        """The answer of `turn_id` as the tabs have it (nothing yet for a new turn)."""
        state = self._state
        return state if state is not None and state.turn_id == turn_id else StreamState(turn_id)

    def _tool_frame(self, event: ToolCallStarted | ToolCallWaiting | ToolCallFinished) -> str:
        """A tool card in the answer's body, after what the model wrote before the call
        (`stream.cut`); a waiting or finished card replaces its running one in place."""
        drawn = card(event)
        html = render_to_string("chat/_tool_card.html", {"card": drawn})
        if self._state is None or self._state.turn_id != event.turn_id:
            self._state, self._cards = StreamState(event.turn_id), {}
        index = self._cards.get(drawn["running_id"])
        if index is not None and not isinstance(event, ToolCallStarted):
            self._state = with_block(self._state, index, html)
            if isinstance(event, ToolCallFinished):
                del self._cards[drawn["running_id"]]
            return render_to_string("chat/_tool_card.html", {"card": drawn, "oob": True})
        self._state, frame, index = cut(self._state, html, self._render)
        if isinstance(event, ToolCallStarted):
            self._cards[drawn["running_id"]] = index
        return frame

    def _finish(self, event: TurnFinished) -> str:
        """The finished frame, which leaves the streamed body where it is; it remembers
        the whole body for a tab that asks for a snapshot afterwards."""
        state = self._state if self._state and self._state.turn_id == event.turn_id else None
        self._state, self._cards = None, {}  # the finished message replaces the streamed one
        rest = finish(state, event.text, self._render)
        if rest is None:
            html = self._render(event.text)
            self._finished = (event, html, False)
            return finished_frame(event, html)
        self._finished = (event, "".join(state.blocks) + rest, True)
        return finished_frame(event, "", rest)

    async def flush(self, in_line: bool = False) -> None:
        """Send the latest answer text now, after any frame on its way, and wait for it.
        `in_line`: the caller found that the frame renders nothing (`_rendering`)."""
        timer, self._timer = self._timer, None
        if timer is not None and timer is not asyncio.current_task():
            timer.cancel()
        async with self._sending:
            pending, self._latest = self._latest, None
            if pending is None:
                return
            self._last_sent = self._clock()
            state = self._state_of(pending.turn_id)
            if not in_line and due(state, pending.text):
                work = asyncio.to_thread(advance, state, pending.text, self._render)
                self._state, message = await work
            else:
                self._state, message = advance(state, pending.text, self._render)
            if message:
                await self._clear_retry()
                await self._send(message)

    async def _clear_retry(self, send: bool = True) -> None:
        """The answer has started: hide the retry note (the finished reply replaces it
        anyway, so it needs no frame of its own)."""
        turn_id, self._retry_shown = self._retry_shown, None
        if turn_id is not None and send:
            await self._send(retry_frame(turn_id))

    def snapshot(self) -> list[str]:
        """The messages that bring a tab joining mid-answer up to date: one frame that
        replaces the body `msg-<turn>-body` with the final blocks so far (their HTML as
        already rendered) and the tail; once the reply has ended, the finished reply with
        its whole body. The tab must have the message (the started frame or the page); the
        frames after the snapshot build on it. Empty when no answer has streamed. To send
        it between two frames, use `send_snapshot`."""
        if self._state is not None:
            return [snapshot(self._state)]
        if self._finished is not None:
            event, html, inside = self._finished
            return [finished_frame(event, html, cards_in_body=inside)]
        return []

    async def send_snapshot(self, send: Send) -> None:
        """Send `snapshot()` with `send` while no frame is on its way, so that every frame
        sent before it is in it and every frame after it builds on it."""
        async with self._sending:
            for message in self.snapshot():
                await send(message)

    async def _flush_after(self, delay: float) -> None:
        if delay:
            await self._sleep(delay)
        self._timer = None  # from here on a flush waits for this one instead of cancelling it
        await self.flush()
