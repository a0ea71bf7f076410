"""Keeping a session's provider cache warm while its tab is open and the person is away.

One loop per session in this process, started when the session falls idle (its turn or
compaction is done: `TurnHost.on_idle`) and when a tab connects; it ends when no tab of
the session is left here, when a turn starts, or when the plan has nothing more worth
sending (`chat.session.keepalive.next_refresh`). Each refresh is announced to the session's
tabs: the status line says what it read and cost (or that it read too little of the prefix
and the session's refreshes stop), and the HUD counts it. A refresh is a
request the person pays for, so nothing is sent while no tab shows the session, and
ACDC_KEEP_WARM=0 turns it off.

The clock and the sleep are attributes so that tests can drive the loop on a fake clock.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.template.loader import render_to_string

from chat.live.turnhost import LocalTabs, TurnHost
from chat.session import keepalive
from chat.turn import faults
from chat.web.broadcast import session_group
from chat.web.fragments import render_hud

log = logging.getLogger(__name__)


class Warmer:
    """One keep-warm loop per session with a tab in this process (`tabs`) and no turn on
    its `host`."""

    def __init__(
        self,
        host: TurnHost,
        tabs: LocalTabs,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        self.host, self.tabs = host, tabs
        self.clock, self.sleep = clock, sleep
        self._loops: dict[str, asyncio.Task] = {}

    def wake(self, session_id: str) -> None:
        """(Re)start the session's loop from its current plan."""
        if not settings.ACDC_KEEP_WARM or not self.tabs.of(session_id):
            return
        self.cancel(session_id)
        self._loops[session_id] = asyncio.create_task(self._run(session_id))

    def running(self, session_id: str) -> bool:
        return session_id in self._loops

    def cancel(self, session_id: str) -> None:
        loop = self._loops.pop(session_id, None)
        if loop is not None:
            loop.cancel()

    async def close(self) -> None:
        loops = list(self._loops.values())
        self._loops.clear()
        for loop in loops:
            loop.cancel()
        await asyncio.gather(*loops, return_exceptions=True)

    def _present(self, session_id: str) -> bool:
        return bool(self.tabs.of(session_id)) and not self.host.running(session_id)

    async def _run(self, session_id: str) -> None:
        me = asyncio.current_task()
        try:
            seen = None
            while self._present(session_id):
                due = await database_sync_to_async(keepalive.next_refresh)(
                    session_id, self.host.runtime
                )
                if due is None or due == seen:  # nothing due, or the last one was refused
                    return
                seen = due
                await self.sleep(max(0.0, due - self.clock()))
                if not self._present(session_id):
                    return
                done = await keepalive.refresh(session_id, self.clock(), self.host)
                if done is not None:
                    await _announce(session_id, done)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            fault = faults.fault_of(exc)  # a database or Redis outage: one line, and stop
            if fault is None:
                log.exception("keeping the cache of session %s warm failed", session_id)
            else:
                log.warning("keeping session %s warm stopped: %s", session_id, fault.line())
        finally:
            if self._loops.get(session_id) is me:
                del self._loops[session_id]


def refresh_text(done: keepalive.Refresh) -> str:
    """What the status line says of a refresh: what it read, or that it did not read the
    conversation's cached prefix and no more refreshes go out."""
    read = done.usage.cache_read_tokens if done.usage else 0
    cost = f" for ${done.cost:.4f}" if done.cost else ""
    if not done.useful:
        return (
            f"Stopped keeping the conversation cached: {done.stopped}{cost}, so it did not "
            "renew the cached conversation. No more refreshes go out for this session."
        )
    return (
        f"Kept the conversation cached while you were away: {read:,} tokens read "
        f"from the cache{cost}, so your next message does not pay to write them again."
    )


async def _announce(session_id: str, done: keepalive.Refresh) -> None:
    context = {"text": refresh_text(done), "count": done.count}
    html = render_to_string("chat/_frame_keepalive.html", context) + render_hud(done.hud)
    await get_channel_layer().group_send(
        session_group(session_id), {"type": "chat.frame", "html": html}
    )
