"""What a turn host keeps when a fault outside acdc (a full disk, a database or Redis out of
reach, `chat.turn.faults`) stopped a turn: its ending, until storage is back.

`Unstored` holds, per session, the ending a fault kept from the store (or, when the fault
came before the reply began, only the turn's id and the reason) and stores it, with the
turn's lease given back (`chat.turn.reply.store_late`), as soon as storage is back: it
tries again on a timer (after 0.25 s, doubling to every `RETRY_MAX` s) and draws the
conversation again in the session's tabs when it is stored, and the session's next turn
tries first too. So the row never stays `streaming` until its lease runs out when no
message follows, the next message is never "already being written", and the reply's row
ends with the fault as its reason rather than with the dead-worker note. `told` is what
the tab that sent the message is told: one line, and whether its message is still in the
box. Non-goal: keeping endings across a restart (the next worker ends such a row when the
lease has run out, `chat.session.end_expired_turn`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer

from chat.turn import faults
from chat.turn.events import TurnFinished
from chat.turn.faults import Fault
from chat.turn.reply import store_late
from chat.turn.turns import fault_notice, locked_notice
from chat.web.broadcast import session_group
from chat.web.conversation import ended_frame
from history import dbfaults

log = logging.getLogger(__name__)
FAILED = "Something went wrong on the server; see its log."
RETRY_FIRST, RETRY_MAX = 0.25, 5.0  # seconds between tries to store a kept ending


@dataclass(frozen=True)
class Ending:
    turn_id: str
    finished: TurnFinished | None  # as told to the tabs; None before the reply began
    reason: str


class Unstored:
    """The endings waiting for storage, by session (one per session: the first fault's)."""

    def __init__(self, sleep: Callable[[float], Awaitable[object]] = asyncio.sleep) -> None:
        self._endings: dict[str, Ending] = {}
        self._locks: dict[str, asyncio.Lock] = {}  # a try on the timer, or the next turn's
        self._retries: dict[str, asyncio.Task] = {}
        self.sleep = sleep

    async def said(self, exc: Exception, session_id: str, sent, since, hosted) -> str | None:
        """The line for the tab whose work `exc` stopped, when it is a fault outside acdc
        (logged in one line; the ending kept for later), else None: a bug. `sent`: the
        work's text, and whether it was Compact now."""
        text, compact = sent
        if dbfaults.is_locked(exc) and not compact:
            return await database_sync_to_async(locked_notice)(session_id, text, since)
        fault = faults.fault_of(exc)
        if fault is None:
            return None
        log.warning("session %s: %s", session_id, fault.line())
        self.keep(session_id, hosted.turn_id, hosted.finished, fault.line())
        return await told(session_id, text, since, fault, hosted.finished)

    def keep(self, session_id: str, turn_id: str, finished, reason: str) -> None:
        """Keep the ending of `turn_id`, and store it as soon as storage is back."""
        if turn_id and session_id not in self._endings:
            self._endings[session_id] = Ending(turn_id, finished, reason)
        if session_id in self._endings and session_id not in self._retries:
            self._retries[session_id] = asyncio.create_task(self._retry(session_id))

    def waiting(self, session_id: str) -> bool:
        return session_id in self._endings

    async def store(self, session_id: str, broadcast: Callable[[str], Awaitable[None]]) -> None:
        """Store the session's waiting ending (raises while the fault lasts: the message
        that asked stays in its box) and draw the conversation again in every tab."""
        async with self._locks.setdefault(session_id, asyncio.Lock()):
            ending = self._endings.get(session_id)
            if ending is None:
                return
            store = database_sync_to_async(store_late)
            await store(session_id, ending.turn_id, ending.finished, ending.reason)
            del self._endings[session_id]
        log.info("session %s: the ending of turn %s is stored", session_id, ending.turn_id)
        await broadcast(await database_sync_to_async(ended_frame)(session_id))

    async def close(self) -> None:
        """Server shutdown: the tries stop (the lease runs out; the next start ends it)."""
        retries = list(self._retries.values())
        for task in retries:
            task.cancel()
        await asyncio.gather(*retries, return_exceptions=True)

    async def _retry(self, session_id: str) -> None:
        """Try to store the session's ending until it is stored (by this or its next turn),
        waiting longer between tries while the fault lasts; said once in the log."""
        me, pause = asyncio.current_task(), RETRY_FIRST
        try:
            while self.waiting(session_id):
                await self.sleep(pause)
                pause = min(pause * 2, RETRY_MAX)
                try:
                    await self.store(session_id, lambda html: _to_tabs(session_id, html))
                except Exception as exc:
                    if not faults.is_fault(exc) and not dbfaults.is_locked(exc):
                        raise
                    log.debug("session %s: its ending waits still", session_id, exc_info=True)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("storing the kept ending of session %s failed", session_id)
        finally:
            if self._retries.get(session_id) is me:
                del self._retries[session_id]


async def told(session_id: str, message: str, since: datetime, fault: Fault, finished) -> str:
    """The line for the tab: after the reply ended, the fault alone (the reply says how it
    ended); before, whether the message was stored and where it is."""
    if finished is not None:
        return fault.line()
    return await database_sync_to_async(fault_notice)(session_id, message, since, fault)


async def _to_tabs(session_id: str, html: str) -> None:
    """A frame for every tab of the session, on any worker; none while Redis is out of
    reach (the tabs reconnect and draw the conversation afresh)."""
    try:
        await get_channel_layer().group_send(
            session_group(session_id), {"type": "chat.frame", "html": html}
        )
    except Exception as exc:
        fault = faults.fault_of(exc)
        if fault is None or fault.kind != "redis":
            raise
        log.debug("the stored ending was not told: %s", fault.line())


Broadcast = Callable[[str], Awaitable[None]]


def guarded(broadcast: Broadcast, hosted) -> Broadcast:
    """`broadcast`, going on when the channel layer is out of reach (Redis killed): the turn
    goes on writing to the database, the log says so once per turn, and the tabs, whose
    own sockets lost the layer, are told there and reconnect (`ChatConsumer.__call__`)."""

    async def send(html: str) -> None:
        try:
            await broadcast(html)
        except Exception as exc:
            fault = faults.fault_of(exc)
            if fault is None or fault.kind != "redis":
                raise
            if not hosted.layer_down:
                hosted.layer_down = True
                log.warning("a turn goes on without its tabs: %s", fault.line())

    return send
