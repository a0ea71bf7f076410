"""The turn host's side of "Check after applying edits" (`chat.turn.checking`).

After a turn whose edits applied (Auto-apply, `acdc chat --apply`) and after Accept all
wrote a reply's edits, the session's check runs as part of the session's work, so a message
sent meanwhile waits for it; every tab draws the conversation with the run. A failure is
sent back once: the fix round is queued as the session's next turn, first in line. A
watcher (`acdc chat` through the server) is told the run instead, and runs that round
itself, to print it and give its exit status.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Awaitable, Callable

from channels.db import database_sync_to_async

from chat.live.protocol import ClientFrame
from chat.repo import indexing
from chat.repo.commands.runner import CommandRuns
from chat.turn.checking import CheckRun, after_apply
from chat.turn.events import TurnWatcher
from chat.web.conversation import conversation_frame

log = logging.getLogger(__name__)
Broadcast = Callable[[str], Awaitable[None]]
CHECK = "check"  # a frame's action: the check of `message`, a turn id, after Accept all


def check_frame(turn_id: str) -> ClientFrame:
    return ClientFrame(action=CHECK, message=turn_id)


async def after_turn(
    session_id: str,
    turn_id: str,
    *,
    watcher: TurnWatcher | None,
    waiting: deque,
    model: str,
    broadcast: Broadcast,
    runs: CommandRuns,
    repo: indexing.Repository,
    starter: str = "",
) -> CheckRun | None:
    """The check after the turn `turn_id`, when one is due; the fix round queued first in
    `waiting` (the host's queue of the session) when it failed and may be sent back."""
    asked = getattr(watcher, "check", "")
    ran = await after_apply(session_id, turn_id, runs=runs, repo=repo, asked=asked)
    if ran is None:
        return None
    await broadcast(await database_sync_to_async(conversation_frame)(session_id))
    if watcher is not None:
        await watcher.event(ran)
    elif ran.sends_back:
        fix = ClientFrame(action="send", message=ran.fix_request(), model=model)
        waiting.appendleft((fix, starter, None))
    return ran


async def after_accept(
    session_id: str,
    turn_id: str,
    waiting: deque,
    broadcast: Broadcast,
    runs: CommandRuns,
    repo: indexing.Repository,
):
    """The check Accept all asked for: a failure or a fault is logged, never raised (the
    edits are written; nobody waits on this work)."""
    try:
        await after_turn(
            session_id,
            turn_id,
            watcher=None,
            waiting=waiting,
            model="",
            broadcast=broadcast,
            runs=runs,
            repo=repo,
        )
    except Exception:
        log.exception("the check after Accept all failed in %s", session_id)
