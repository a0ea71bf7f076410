"""Fragments drawn the same way by a page's answer and by a frame of the live socket.

The HUD, an error note, a tool card's contents and the Files panel's JSON update: the pages
(`conversation`, `branches`, `edits`) draw them into what they answer, and `chat.live`
sends the same fragments as websocket frames. They live here, on the pages' side, so that
the socket imports them and the pages never import the socket. Every HTML fragment comes
from a template under `templates/chat/`; nothing here reads the database.
"""

from __future__ import annotations

import hashlib
import json
import re

from ansi2html import Ansi2HTMLConverter
from django.template.loader import render_to_string

from chat.turn.events import ToolCallFinished, ToolCallOutput, ToolCallStarted, ToolCallWaiting
from chat.web import approval_cards, proposals
from contextcore.controls import printable


def render_hud(hud: dict) -> str:
    return render_to_string("chat/_hud.html", {"hud": hud, "oob": True})


def render_error(text: str, turn_id: str = "") -> str:
    return render_to_string("chat/_frame_error.html", {"text": text, "turn_id": turn_id})


def picker_message(turn_id: str = "", **changes) -> str:
    """The Files panel's former JSON message (active, pinned, uncheck, flash, counts,
    progress, changed, added, removed), which the page no longer takes: kept only as the
    baseline `bench.repo.picker_updates` measures the HTML fragments against."""
    message = {"type": "picker", "turn": turn_id, "update": changes}
    return json.dumps(message, separators=(",", ":"))


TOOL_PREVIEW_CHARS = 4000
_CUT_SGR = re.compile(r"\x1b\[[0-9;:]*$")  # a colour code the preview's end split


def card(event: ToolCallStarted | ToolCallWaiting | ToolCallFinished) -> dict:
    """What a tool card shows: the tool's name once and its arguments as the tool took
    them (the whole call again as the tooltip of a line cut short), status, and the start
    of the output.

    Providers may reuse a call id from one round to the next, so no DOM id is the call id
    alone. A finished card is named after its stored toolcall object (unique in the
    session); a running one after its turn and call id, which is unique while it runs
    because a turn runs its calls one at a time. The finished card replaces the running one.
    """
    finished = isinstance(event, ToolCallFinished)
    waiting = isinstance(event, ToolCallWaiting)
    proposal = event.proposal if finished or waiting else None
    output = event.output if finished else ""
    preview = _CUT_SGR.sub("", output[:TOOL_PREVIEW_CHARS])
    shown = len(printable(preview, colours=False))
    running_id = _dom_id(f"{event.turn_id}:{event.call_id}")
    object_id = event.object_id if finished else ""
    return {
        "call_id": event.call_id,
        "dom_id": _dom_id(object_id) if object_id else running_id,
        "running_id": running_id,
        "tool": event.tool,
        "call": event.args_display,
        "args": _arguments_shown(event.tool, event.args_display),
        "status": event.status if finished else "waiting" if waiting else "running",
        "output": preview,  # its colours kept: the template draws them (`colours`)
        "cut": max(0, len(printable(output, colours=False)) - shown),
        "lines": output.count("\n") + 1 if output else 0,
        # A command left for the person: its card, with the buttons while it waits.
        "proposal": _pending_shown(proposal) if proposal else None,
    }


def _pending_shown(proposal: dict) -> dict:
    """A proposed command's card, or an MCP tool call's approval card."""
    return approval_cards.shown(proposal) if proposal.get("mcp") else proposals.shown(proposal)


def live_output(event: ToolCallOutput) -> dict:
    """A running command's card's live output: the last bytes it printed, its ANSI
    colours as HTML (escaped: what it prints is text, never markup), and how much of it
    is left out."""
    shown = len(event.text.encode())
    return {
        "id": _dom_id(f"{event.turn_id}:{event.call_id}") + "-live",
        "html": coloured_html(event.text),
        "total": event.total,
        "left_out": max(0, event.total - shown),
    }


def coloured_html(text: str) -> str:
    """`text` (`printable`: no control sequence but SGR colours) as HTML, escaped: each
    colour a span with ansi2html's classes (tools.css draws them light and dark), no
    escape character left. The one drawing of colours, for live and finished cards."""
    converter = Ansi2HTMLConverter(inline=False, escaped=True, linkify=False)
    return converter.convert(text, full=False).replace("\x1b", "")


def _dom_id(key: str) -> str:
    return "tool-" + hashlib.sha1(key.encode()).hexdigest()[:12]


def _arguments_shown(tool: str, display: str) -> str:
    """The arguments inside `display` ("name(arguments)", cut at 200 characters), so the
    card can show the name once; "…" marks a cut. Any other display goes in whole."""
    inner = display.removeprefix(f"{tool}(")
    if inner == display:
        return display
    return inner[:-1] if inner.endswith(")") else inner + "…"
