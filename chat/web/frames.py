"""Turn events rendered as htmx out-of-band HTML frames, coalesced for the wire.

Every HTML frame is rendered from a template under `templates/chat/` and carries the turn
id; changes to the Files panel travel as JSON messages of their own (`picker_message`).
Answer updates are coalesced: at most one frame per `interval` (~20 a second), each
carrying the whole rendered answer so far, so a slow browser never falls behind a fast
model, and the last state always arrives.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Awaitable, Callable

from django.template.loader import render_to_string

from chat.turn.events import (
    HudUpdate,
    SetsChanged,
    ToolCallFinished,
    ToolCallStarted,
    TurnDelta,
    TurnEvent,
    TurnFinished,
    TurnNotice,
    TurnStarted,
)
from chat.web.render import render_markdown

Send = Callable[[str], Awaitable[None]]


def render_event(event: TurnEvent) -> list[str]:
    """The websocket messages for one turn event, in order: HTML fragments for htmx, and
    for changes to the Files panel a JSON message of its own (`picker_message`)."""
    if isinstance(event, TurnNotice) and event.paths:
        return [_render_html(event), picker_message(event.turn_id, uncheck=list(event.paths))]
    if isinstance(event, SetsChanged):
        changes = {"active": list(event.active), "pinned": list(event.pinned)}
        return [picker_message(event.turn_id, **changes, flash=list(event.paths))]
    return [_render_html(event)]


def _render_html(event: TurnEvent) -> str:
    if isinstance(event, TurnStarted):
        return render_to_string("chat/_frame_started.html", {"event": event})
    if isinstance(event, TurnDelta):
        return render_to_string(
            "chat/_frame_delta.html", {"event": event, "html": render_markdown(event.text)}
        )
    if isinstance(event, TurnNotice):
        return render_to_string("chat/_frame_notice.html", {"event": event})
    if isinstance(event, TurnFinished):
        html = render_markdown(event.text)
        cards = [card(c) for c in event.tool_cards]
        context = {"event": event, "html": html, "cards": cards}
        return render_to_string("chat/_frame_finished.html", context)
    if isinstance(event, HudUpdate):
        return render_to_string("chat/_hud.html", {"hud": event.hud, "oob": True})
    if isinstance(event, ToolCallStarted | ToolCallFinished):
        return render_to_string("chat/_frame_tool.html", {"event": event, "card": card(event)})
    raise TypeError(f"not a turn event: {event!r}")


def picker_message(turn_id: str = "", **changes) -> str:
    """A websocket message of its own type for the Files panel (not HTML: picker.js takes
    it before htmx would swap it): any of active, pinned, uncheck, flash, counts,
    progress, changed, added, removed."""
    message = {"type": "picker", "turn": turn_id, "update": changes}
    return json.dumps(message, separators=(",", ":"))


TOOL_PREVIEW_CHARS = 4000


def card(event: ToolCallStarted | ToolCallFinished) -> dict:
    """What a tool card shows: name, arguments, status, and the start of the output."""
    finished = isinstance(event, ToolCallFinished)
    output = event.output if finished else ""
    return {
        "call_id": event.call_id,
        "dom_id": "tool-" + hashlib.sha1(event.call_id.encode()).hexdigest()[:12],
        "tool": event.tool,
        "args": event.args_display,
        "status": event.status if finished else "running",
        "output": output[:TOOL_PREVIEW_CHARS],
        "cut": max(0, len(output) - TOOL_PREVIEW_CHARS),
        "lines": output.count("\n") + 1 if output else 0,
    }


def render_hud(hud: dict) -> str:
    return render_to_string("chat/_hud.html", {"hud": hud, "oob": True})


def render_error(text: str, turn_id: str = "") -> str:
    return render_to_string("chat/_frame_error.html", {"text": text, "turn_id": turn_id})


class DeltaCoalescer:
    """Forwards turn events to `send`, merging answer deltas that arrive too fast."""

    def __init__(self, send: Send, interval: float = 0.05, clock=time.monotonic) -> None:
        self._send = send
        self._interval = interval
        self._clock = clock
        self._pending: TurnDelta | None = None
        self._timer: asyncio.Task | None = None
        self._last_sent = float("-inf")
        self._lock = asyncio.Lock()

    async def emit(self, event: TurnEvent) -> None:
        if isinstance(event, TurnDelta):
            self._pending = event
            if self._timer is None:
                delay = max(0.0, self._last_sent + self._interval - self._clock())
                self._timer = asyncio.ensure_future(self._flush_after(delay))
            return
        await self._flush()
        async with self._lock:
            for message in render_event(event):
                await self._send(message)

    async def _flush_after(self, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        self._timer = None
        await self._flush()

    async def _flush(self) -> None:
        if self._timer is not None and self._timer is not asyncio.current_task():
            self._timer.cancel()
            self._timer = None
        async with self._lock:
            pending, self._pending = self._pending, None
            if pending is not None:
                self._last_sent = self._clock()
                for message in render_event(pending):
                    await self._send(message)
