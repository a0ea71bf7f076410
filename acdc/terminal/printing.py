"""What the terminal prints beside the reply: one line per tool call, each log line once.

`acdc chat` (in this process or through `acdc serve`) prints the reply on stdout and, on
stderr, one line per finished call (`tool_note`): the call as the page's card names it
(cut at `CALL_CHARS`), whether it was done or failed, and for a command its exit line
("exit status 1 after 0.3 s"). The line is plain and visible (`contextcore.controls`): no
colour or control sequence the model wrote, no line break, so one call is one line; the
tool's output stays in the page's card and the history. `log_once_beside_daphne`: `acdc
serve`'s own log lines ("map ready: …") are printed once, not again by Daphne's handler.
"""

from __future__ import annotations

import logging

from chat.turn.events import ToolCallFinished
from contextcore.controls import printable, visible

CALL_CHARS = 120
COMMAND_TOOLS = ("run_command", "propose_command")
OWN_LOGGERS = ("acdc", "chat")  # the loggers settings.LOGGING gives a handler


def tool_note(event: object) -> str:
    """`tool read_file(path='a.py'): done`, `tool run_command(name='test'): failed, exit
    status 1 after 0.3 s`; "" for an event that is no finished tool call."""
    if not isinstance(event, ToolCallFinished):
        return ""
    call = event.args_display or f"{event.tool}(…)"
    if len(call) > CALL_CHARS:
        call = call[: CALL_CHARS - 1] + "…"
    ended = "done" if event.status == "ok" else "failed"
    if event.tool in COMMAND_TOOLS:
        ended += _command_ending(event.output)
    return visible(printable(f"tool {call}: {ended}", colours=False))


def _command_ending(output: str) -> str:
    """A command's exit line from its result ("$ argv", then how it ended), or what it
    waits for."""
    lines = output.split("\n", 2)
    if output.startswith("$ ") and len(lines) > 1 and lines[1].strip():
        return f", {lines[1].strip()[:CALL_CHARS]}"
    first = lines[0].strip()
    return f", {first.split(':', 1)[0]}" if first.startswith("waiting for the person") else ""


def log_once_beside_daphne() -> None:
    """Daphne's start gives the root logger a handler of its own (`logging.basicConfig`);
    acdc's loggers print through theirs, so their lines do not go on to Daphne's too."""
    for name in OWN_LOGGERS:
        logging.getLogger(name).propagate = False
