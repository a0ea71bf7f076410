"""Turns belong to their session, not to the socket that asked for one.

A turn runs as a task of this process, kept here, and speaks to the session's channel
group, so closing or reloading the tab that sent the message never cancels it: any tab
showing the session, on any worker, sees the stream. What tabs ask of a running turn
travels through the same group, and the consumers on the turn's worker hand it over:
`turn.stop` (Stop, from any tab: the only way to cancel a turn) and `turn.snapshot` (a
tab that opened the session mid-turn gets what has streamed so far, then the live
frames). Stop is also written to the session row, which the turn reads every second while
it streams, so it reaches a turn whose worker has no tab of the session left.

Frames skip the channel layer while every tab of the session is on the turn's own worker
(the usual case: one tab, which sent the message): they go straight to those sockets
(`LocalTabs`, the host's `tabs`). On Redis a group send costs several round trips per frame
and per tab, on the worker, on Redis and on the receiving worker, for frames that end up in
this process anyway. The turn asks once, at its first frame, whether tabs elsewhere show the
session (`presence`: the tabs say where they are, since channels cannot list a group's
members); a tab that joins later on another worker asks for a snapshot through the group,
and from then on the turn's frames go through the group.

One turn at a time per session is the lease's work (`chat.session`); here a message sent
while the previous turn is in its after-reply work (checkpoint, compaction) waits for it
instead of being refused. At server shutdown `close` cancels every hosted turn as
interrupted (its text so far is stored) and starts nothing that waited. The host is one per
process, built with the rest of what it serves (`chat.live.served`), and hands each turn the
runtime and repository maps it was built with. A reply left streaming by a worker that died
is ended here by whichever worker notices its expired lease (`end_dead_turn`: a tab
connects, a message is sent, Stop is pressed), and every tab is told.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.utils import timezone

from chat.live import outages, presence
from chat.live.frames import DeltaCoalescer
from chat.live.surface import PageSurface, reporter
from chat.llm.runtime import Runtime
from chat.repo import edittools
from chat.repo.commands.runner import CommandRuns
from chat.repo.listings import FilesPanel
from chat.repo.repomap.builder import RepoMaps
from chat.repo.served_repo import ServedRepository
from chat.session import end_expired_turn, request_stop
from chat.turn.after_turn import run_compaction
from chat.turn.afterreply import AfterReply
from chat.turn.branches.kinds import SentMessage, TurnKind, run_message
from chat.turn.checking import claim_due
from chat.turn.events import ToolCallFinished, TurnFinished, TurnWatcher
from chat.turn.turns import TurnRejected, TurnServices
from chat.web.broadcast import session_group
from chat.web.conversation import (
    conversation_frame,
    ended_frame,
    retry_frame,
)
from chat.web.edits.cards import turn_frames
from chat.web.fragments import render_error
from contextcore.edits.ops import EDIT_TOOLS
from history.ids import new_turn_id
from history.markup.rendered import RenderedReplies
from history.memory import WorkingHistories

log = logging.getLogger(__name__)


class LocalTabs:
    """The sockets of this process, by session: what a turn may reach without the layer."""

    def __init__(self) -> None:
        self._tabs: dict[str, dict[str, Callable[[str], Awaitable[None]]]] = {}

    def add(self, session_id: str, channel: str, send: Callable[[str], Awaitable[None]]) -> None:
        self._tabs.setdefault(session_id, {})[channel] = send

    def discard(self, session_id: str, channel: str) -> None:
        tabs = self._tabs.get(session_id, {})
        tabs.pop(channel, None)
        if not tabs:
            self._tabs.pop(session_id, None)

    def of(self, session_id: str) -> dict[str, Callable[[str], Awaitable[None]]]:
        return dict(self._tabs.get(session_id, {}))


@dataclass(frozen=True)
class _Accepted:
    """Accept all wrote the edits of the reply of `turn_id`: its check is the work."""

    turn_id: str


@dataclass
class _Hosted:
    task: asyncio.Task | None = None
    coalescer: DeltaCoalescer | None = None
    after_reply: bool = False  # the reply is out; checkpoint or compaction may follow
    waiting: deque = field(default_factory=deque)  # (frame, reply_to, watcher), in order
    # Whether the session has tabs on other workers: None until the first frame asks.
    shared: bool | None = None
    starter: str = ""  # the channel of the tab whose frame started the work
    watcher: TurnWatcher | None = None  # who asked, when not a tab
    turn_id: str = ""  # the turn's, once it has one
    finished: TurnFinished | None = None  # its ending, as told to the tabs
    layer_down: bool = False  # the channel layer failed under it (said once in the log)


class TurnHost:
    """The turns of this process, one entry per session with work under way; their frames
    reach the process's own `tabs` directly, and the Files panel's rows through `panel`."""

    def __init__(
        self,
        tabs: LocalTabs,
        runtime: Runtime,
        maps: RepoMaps,
        panel: FilesPanel,
        commands: CommandRuns | None = None,
        *,
        repository: ServedRepository,
        histories: WorkingHistories,
    ) -> None:
        self.tabs, self.runtime, self.maps, self.panel = tabs, runtime, maps, panel
        self.repository, self.histories = repository, histories  # the served object's
        # The model's commands and the checks (one run per session): the served object's.
        self.commands = commands if commands is not None else CommandRuns()
        self._hosted: dict[str, _Hosted] = {}
        self._unstored = outages.Unstored()  # endings a fault kept from the store
        self._closing = False
        self.replies = RenderedReplies()  # each reply's HTML, once for every redraw
        # Told when a session's work is done and nothing waits (chat.live.keepwarm).
        self.on_idle: Callable[[str], None] = lambda session_id: None

    def running(self, session_id: str) -> bool:
        return session_id in self._hosted

    async def submit(
        self, session_id: str, frame, reply_to: str, watcher: TurnWatcher | None = None
    ) -> None:
        """Start the work a frame asks for (a message, or Compact now). Refusals go to the
        asking tab alone (`reply_to`, its channel name), or to the `watcher` that asked."""
        hosted = self._hosted.get(session_id)
        if hosted is None:
            self._start(session_id, frame, reply_to, deque(), watcher)
        elif hosted.after_reply or hosted.waiting:
            # After the reply, before the next: this one waits for the checkpoint or
            # compaction, behind whatever already waits.
            hosted.waiting.append((frame, reply_to, watcher))
        else:  # the message stays in that tab's box (chat.js puts it back)
            where = "" if reply_to == hosted.starter else " in another tab"
            text = f"A reply is still being written{where}; wait for it or press Stop."
            await _refuse(watcher, reply_to, text)
            if watcher is not None:
                watcher.done()

    def _start(
        self,
        session_id: str,
        frame,
        reply_to: str,
        waiting: deque,
        watcher: TurnWatcher | None = None,
    ) -> None:
        # Compaction and a check are after-reply work from the start: a message waits.
        after = isinstance(frame, _Accepted) or getattr(frame, "action", "") == "compact"
        hosted = _Hosted(after_reply=after, waiting=waiting, starter=reply_to)
        hosted.watcher = watcher
        self._hosted[session_id] = hosted
        hosted.task = asyncio.create_task(self._host(session_id, hosted, frame, reply_to))

    def _next(self, session_id: str, hosted: _Hosted) -> None:
        """Hand the session to the first frame that waited, with no gap in which a newer
        frame could overtake it."""
        if self._hosted.get(session_id) is not hosted:
            return
        del self._hosted[session_id]
        if hosted.waiting and not self._closing:
            frame, reply_to, watcher = hosted.waiting.popleft()
            self._start(session_id, frame, reply_to, hosted.waiting, watcher)
        elif not self._closing:
            self.on_idle(session_id)

    async def check_accepted(self, session_id: str) -> None:
        """Accept all wrote a reply's edits: its check, claimed once across workers, after
        the session's work under way."""
        turn_id = await database_sync_to_async(claim_due)(session_id)
        hosted = self._hosted.get(session_id)
        if turn_id and hosted is None:
            self._start(session_id, _Accepted(turn_id), "", deque())
        elif turn_id:
            hosted.waiting.append((_Accepted(turn_id), "", None))

    def stop(self, session_id: str) -> None:
        hosted = self._hosted.get(session_id)
        if hosted is not None and hosted.task is not None:
            hosted.task.cancel()

    async def close(self) -> None:
        """Server shutdown: every hosted turn ends as interrupted, and this returns once
        each has stored what it has."""
        self._closing = True  # turns that end from now on are stored as interrupted
        tasks = [hosted.task for hosted in self._hosted.values() if hosted.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._unstored.close()  # the tries to store what a fault kept

    async def send_snapshot(self, session_id: str, reply_to: str) -> None:
        hosted = self._hosted.get(session_id)
        if hosted is None or hosted.coalescer is None:
            return
        local = self.tabs.of(session_id).get(reply_to)
        if local is None:
            hosted.shared = True  # a tab elsewhere: the frames after this go through the group
        layer = get_channel_layer()

        async def to_tab(html: str) -> None:
            if local is not None:  # in line with the frames sent straight to this process's tabs
                await _deliver(local, html)
            else:
                await layer.send(reply_to, {"type": "chat.frame", "html": html})

        # Sent between two frames: every earlier frame is in it, later ones follow.
        await hosted.coalescer.send_snapshot(to_tab)

    async def _host(self, session_id: str, hosted: _Hosted, frame, reply_to: str) -> None:
        since = timezone.now()
        try:
            if isinstance(frame, _Accepted):
                await self._accepted(session_id, hosted, frame.turn_id)
            elif isinstance(frame, SentMessage):  # a fix round (chat.turn.afterreply)
                await self._turn(session_id, hosted, frame)
            elif frame.action == "compact":
                await self._compact(session_id, hosted, frame.focus)
            else:
                await self._turn(session_id, hosted, _sent(frame, hosted.watcher))
        except TurnRejected as exc:
            await _refuse(hosted.watcher, reply_to, str(exc))
        except asyncio.CancelledError:
            pass
        except Exception as exc:  # a fault outside acdc is one line (chat.live.outages)
            said = _said(frame)
            text = await self._unstored.said(exc, session_id, said, since, hosted)
            if text is None:
                log.exception("turn failed in session %s", session_id)
            await _refuse(hosted.watcher, reply_to, text or outages.FAILED)
        finally:
            if hosted.finished is not None and not hosted.finished.stored:
                self._unstored.keep(session_id, hosted.turn_id, hosted.finished, "")
            if hosted.watcher is not None:
                hosted.watcher.done()
            self._next(session_id, hosted)

    async def _turn(self, session_id: str, hosted: _Hosted, message: SentMessage) -> None:
        broadcast = _broadcaster(self.tabs, session_id, hosted)
        hosted.coalescer = DeltaCoalescer(broadcast, self.panel)
        watcher = hosted.watcher

        async def emit(event) -> None:
            if isinstance(event, TurnFinished):
                hosted.after_reply = True  # before the tab can see it: a reply to it waits
                hosted.finished = event
            await hosted.coalescer.emit(event)
            if watcher is not None:
                await watcher.event(event)
            if isinstance(event, ToolCallFinished) and event.tool in EDIT_TOOLS:
                await _turn_edits(event.turn_id, broadcast, self.repository)  # its cards

        async def redraw(what: str, retried: str) -> None:
            draw = retry_frame if what == "retry" else conversation_frame
            args = (session_id, retried) if what == "retry" else (session_id,)
            await broadcast(await database_sync_to_async(draw)(*args, replies=self.replies))

        # A dead worker's reply is ended before this one starts, told through the same path
        # as the turn's frames so no tab sees them out of order.
        await self._unstored.store(session_id, broadcast)  # what a fault kept, first
        await end_dead_turn(session_id, broadcast)
        turn_id = hosted.turn_id = new_turn_id()
        after = self._after(PageSurface(broadcast, self.repository, watcher), turn_id, message)
        services = TurnServices(
            emit,
            wiring=self,  # the runtime and maps the host was built with
            after=after,
            stopping=self.closing,
            commands=self.commands,
            page_served=watcher is None,  # the terminal's turns never wait for a page
        )
        await run_message(session_id, message, redraw, services, turn_id)
        await self._fix_round(hosted, after.fix)

    def _after(self, surface: PageSurface, turn_id: str, message: SentMessage) -> AfterReply:
        """The turn's end; `acdc chat` through the server names its check (`--check`) and
        counts its own fix rounds."""
        watcher = surface.watcher
        check, fixes = getattr(watcher, "check", ""), getattr(watcher, "fixes", None)
        runs, served = self.commands, self.repository
        return AfterReply(surface, turn_id, runs, served, message.model, check, fixes)

    async def _fix_round(self, hosted: _Hosted, fix: SentMessage | None) -> None:
        """The check's one fix round: the session's next turn, first in line; a watcher
        (`acdc chat` through the server) is told it, and sends it itself."""
        if fix is not None and hosted.watcher is not None:
            await hosted.watcher.event(fix)
        elif fix is not None:
            hosted.waiting.appendleft((fix, hosted.starter, None))

    async def _accepted(self, session_id: str, hosted: _Hosted, turn_id: str) -> None:
        """The check Accept all asked for: a failure or a fault is logged, never raised (the
        edits are written; nobody waits on this work)."""
        surface = PageSurface(_broadcaster(self.tabs, session_id, hosted), self.repository)
        after = AfterReply(surface, turn_id, self.commands, self.repository)
        try:
            await after.checked(session_id, turn_id)
        except Exception:
            log.exception("the check after Accept all failed in %s", session_id)
        await self._fix_round(hosted, after.fix)

    def closing(self) -> bool:
        """Whether the server is stopping (`close` began)."""
        return self._closing

    async def _compact(self, session_id: str, hosted: _Hosted, focus: str) -> None:
        report = reporter(_broadcaster(self.tabs, session_id, hosted))
        await run_compaction(session_id, report, wiring=self, focus=focus, force=True)


async def _turn_edits(
    turn_id: str, broadcast: Callable[[str], Awaitable[None]], served: ServedRepository
) -> None:
    if edittools.enabled():
        for frame in await database_sync_to_async(turn_frames)(turn_id, served.indexed()):
            await broadcast(frame)


async def ask_stop(session_id: str) -> None:
    await database_sync_to_async(request_stop)(session_id)
    await get_channel_layer().group_send(session_group(session_id), {"type": "turn.stop"})
    await end_dead_turn(session_id)  # Stop on a reply whose worker died ends it, truthfully


async def end_dead_turn(
    session_id: str, broadcast: Callable[[str], Awaitable[None]] | None = None
) -> int:
    """End what a dead worker left streaming in the session (none while a turn holds a live
    lease) and draw the conversation again in every tab (through `broadcast`, else the
    session's group), with Stop off; returns how many."""
    ended = await database_sync_to_async(end_expired_turn)(session_id)
    if ended:
        html = await database_sync_to_async(ended_frame)(session_id)
        if broadcast is not None:
            await broadcast(html)
        else:
            frame = {"type": "chat.frame", "html": html}
            await get_channel_layer().group_send(session_group(session_id), frame)
    return ended


async def ask_snapshot(session_id: str, reply_to: str) -> None:
    message = {"type": "turn.snapshot", "reply_to": reply_to}
    await get_channel_layer().group_send(session_group(session_id), message)


def _broadcaster(
    local: LocalTabs, session_id: str, hosted: _Hosted
) -> Callable[[str], Awaitable[None]]:
    layer = get_channel_layer()
    group = session_group(session_id)

    async def broadcast(html: str) -> None:
        tabs = local.of(session_id)
        if hosted.shared is None and tabs:
            hosted.shared = await presence.elsewhere(layer, group, session_id, set(tabs))
        if hosted.shared is False and tabs:
            for send in tabs.values():
                await _deliver(send, html)
        else:
            await layer.group_send(group, {"type": "chat.frame", "html": html})

    return outages.guarded(broadcast, hosted)  # the turn goes on without the channel layer


async def _deliver(send: Callable[[str], Awaitable[None]], html: str) -> None:
    try:
        await send(html)
    except Exception:  # a socket closing as the frame goes out: the other tabs still get it
        log.debug("a frame to a closing tab was dropped", exc_info=True)


async def _refuse(watcher: TurnWatcher | None, reply_to: str, text: str) -> None:
    if watcher is not None:
        await watcher.refused(text)
    elif reply_to:
        await _tell(reply_to, text)
    else:  # acdc's own work (a check's fix round): no tab asked for it
        log.warning("%s", text)


async def _tell(channel: str, text: str) -> None:
    await get_channel_layer().send(channel, {"type": "chat.frame", "html": render_error(text)})


def _sent(frame, watcher: TurnWatcher | None) -> SentMessage:
    """A tab's (or the terminal's) message frame as the turn's message; `acdc chat --apply`
    through the server: its reply applies whole when it ends, as in-process."""
    kind = TurnKind(branch=frame.branch, retry=frame.retry, replaces=frame.replaces)
    apply = bool(getattr(watcher, "apply_edits", False))
    return SentMessage(frame.message, kind, frame.images, frame.model, frame.mentions, apply)


def _said(frame) -> tuple[str, bool]:
    """What the work's person sent, for a fault's line, and whether it was Compact now."""
    if isinstance(frame, SentMessage | _Accepted):
        return getattr(frame, "text", ""), False
    return frame.message, getattr(frame, "action", "") == "compact"
