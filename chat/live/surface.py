"""The page's side of a turn's end (`chat.turn.afterreply`): what every tab is sent.

Compaction and rollback are drawn as their session events; the reply's diff cards go under
the finished reply; a check run redraws the conversation with it. A watcher (`acdc chat`
through the server) hears the events and the run as well, to print them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from channels.db import database_sync_to_async

from chat.repo.served_repo import ServedRepository
from chat.turn.checking import CheckRun
from chat.turn.events import SessionEvent, TurnWatcher
from chat.web.conversation import conversation_frame, render_session_event
from chat.web.edits.cards import latest_reply_frames

Broadcast = Callable[[str], Awaitable[None]]


class PageSurface:
    """Every tab of the session, through `broadcast`, and the watcher that asked, if any."""

    def __init__(
        self, broadcast: Broadcast, served: ServedRepository, watcher: TurnWatcher | None = None
    ) -> None:
        self.broadcast, self.served, self.watcher = broadcast, served, watcher
        self.report = reporter(broadcast, watcher)

    async def edits(self, session_id: str, turn_id: str) -> int:
        """The reply's diff cards, under the finished reply."""
        repo = self.served.indexed()
        for frame in await database_sync_to_async(latest_reply_frames)(session_id, repo):
            await self.broadcast(frame)
        return 0

    async def checked(self, session_id: str, ran: CheckRun) -> None:
        await self.broadcast(await database_sync_to_async(conversation_frame)(session_id))
        if self.watcher is not None:
            await self.watcher.event(ran)


def reporter(broadcast: Broadcast, watcher: TurnWatcher | None = None):
    async def report(event: SessionEvent) -> None:
        await broadcast(await database_sync_to_async(render_session_event)(event))
        if watcher is not None:
            await watcher.event(event)

    return report
