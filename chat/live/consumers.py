"""The websocket of one chat session: parse frames, hand work to the turn host, relay frames.

Thin by design: parsing lives in `protocol`, turns in `turnhost` (they belong to the
session, not to this socket), rendering in `frames`. Frames of a turn go to the session's
group, so every tab (on any worker) showing the session sees the stream; Stop goes to the
session's control group, so it reaches whichever worker runs the turn. The groups' names
and the socket's query keys are the pages' (`chat.web.broadcast`), which send to them too.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from urllib.parse import parse_qsl

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.layers import get_channel_layer
from django.conf import settings

from chat.live import presence
from chat.live.protocol import ClientFrame, FrameError, parse_frame
from chat.live.served import Served, served
from chat.live.turnhost import ask_snapshot, ask_stop, end_dead_turn
from chat.repo import git
from chat.repo.listings import TreeAsk
from chat.repo.watcher import FileNews
from chat.session import live_turn
from chat.session.setchanges import Choice
from chat.turn import faults
from chat.web.broadcast import DRAWN, SEEN, STREAMING, files_group, session_group
from chat.web.conversation import ended_frame
from chat.web.fragments import render_error
from chat.web.panels.news import count_update, files_frame, session_frames
from chat.web.panels.selection import answer_choice, unanswered
from chat.web.panels.tree import rows_frame
from history import dbfaults
from history.models import Session

log = logging.getLogger(__name__)
LAYER_LOST = 1013  # "try again later": htmx's socket reconnects on it


class ChatConsumer(AsyncWebsocketConsumer):
    async def __call__(self, scope, receive, send) -> None:
        """The socket's life; when its channel layer fails (Redis killed), the tab is told
        in one line and the socket closes with 1013, on which the page reconnects; a socket
        whose layer fails before it opened is refused (the page tries again later)."""
        try:
            await super().__call__(scope, receive, send)
        except Exception as exc:
            fault = faults.fault_of(exc)
            if fault is None or fault.kind != "redis":
                raise
            if getattr(self, "accepted", False):
                log.warning("a tab lost the channel layer: %s", fault.line())
                await self._told_closed(render_error(fault.line()), LAYER_LOST)
            else:  # a try to reconnect while Redis is still down: the tab was told
                log.info("a tab's socket was refused: %s", fault.line())
                await self._told_closed("", None)
            # Channels calls no `disconnect` for a socket whose layer failed: without this,
            # the process's tabs keep its send, and a turn would stream to a dead socket.
            await self.disconnect(LAYER_LOST)

    async def _told_closed(self, html: str, code: int | None) -> None:
        try:
            if html:
                await self.send(html)
            await self.close(code=code)
        except Exception:  # the socket went too
            log.debug("the tab's socket closed with the layer", exc_info=True)

    async def connect(self) -> None:
        self.sends: set[asyncio.Task] = set()  # the counting passes' frames, under way
        self.served = served()  # what the process serves, fetched once per socket
        self.session_id = self.scope["url_route"]["kwargs"]["session_id"]
        self.group = session_group(self.session_id)
        query = _query(self.scope)
        # Before the socket opens: while Redis is down, the page's tries are refused (the
        # browser's 1006), and htmx waits longer before each, instead of one told line a try.
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        self.accepted = True
        live = await _live_turn(self.session_id)
        if live is None:
            await self.send(render_error(f"There is no session {self.session_id!r}."))
            await self.close(code=4404)
            return
        self.served.tabs.add(self.session_id, self.channel_name, self.send)
        await presence.joined(self.session_id, self.channel_name)
        if live:  # a turn is under way: what has streamed so far, then the live frames
            await ask_snapshot(self.session_id, self.channel_name)
        else:  # someone is looking again: keep the cache warm while they read
            ended = await end_dead_turn(self.session_id)
            if not ended and query.get(DRAWN) == STREAMING:
                # The reply the page drew streaming ended before this socket joined the
                # group, so its finished frame went by: draw the conversation again.
                await self.send(await database_sync_to_async(ended_frame)(self.session_id))
            self.served.warmer.wake(self.session_id)
        await self.served.follower.watch(self.session_id, query.get(SEEN, ""), self.send)
        self.files_group = files_group(self.served.repository.root)
        await self.channel_layer.group_add(self.files_group, self.channel_name)
        await self._count_tokens()
        self.repository = self.served.repository.indexed()
        on_change = functools.partial(files_changed, self.served)
        await self.served.watchers.attach(self.repository, on_change)

    async def disconnect(self, code: int) -> None:
        # The turn goes on without this tab: it belongs to the session (see turnhost).
        if not hasattr(self, "served") or getattr(self, "gone", False):
            return  # never connected, or forgotten already (its layer failed)
        self.gone = True
        tabs = self.served.tabs
        tabs.discard(self.session_id, self.channel_name)
        if not tabs.of(self.session_id):
            self.served.warmer.cancel(self.session_id)  # nobody here to come back to it
            self.served.follower.forget(self.session_id)
        if getattr(self, "repository", None) is not None:
            await self.served.watchers.detach(self.repository)
        if sends := getattr(self, "sends", None):
            await asyncio.gather(*sends, return_exceptions=True)
        await presence.left(self.session_id, self.channel_name)
        try:
            await self.channel_layer.group_discard(self.group, self.channel_name)
            if getattr(self, "files_group", None):
                await self.channel_layer.group_discard(self.files_group, self.channel_name)
        except Exception as exc:  # Redis out of reach: its groups forget the name by expiry
            fault = faults.fault_of(exc)
            if fault is None or fault.kind != "redis":
                raise
            log.debug("a closed tab left its groups as they were: %s", fault.line())

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None):
        try:
            frame = parse_frame(text_data, bytes_data, max_bytes=settings.ACDC_MAX_FRAME_BYTES)
        except FrameError as exc:
            # The socket stays open, even after a frame over the size limit: it was read
            # whole, Daphne refuses an application's close code 1009, and htmx's ws extension
            # would not reconnect after one.
            await self.send(render_error(str(exc)))
            return
        if frame.action == "stop":
            await ask_stop(self.session_id)
        elif frame.action == "select":
            await self._select(frame)
        elif frame.action == "rows" and frame.rows is not None:
            await self._rows(frame.rows)
        else:
            await self.served.host.submit(self.session_id, frame, self.channel_name)

    async def _select(self, frame: ClientFrame) -> None:
        choice = Choice(
            frame.choose, frame.paths, frame.on, frame.confirm, frame.outline, frame.selection
        )
        try:
            answer = await database_sync_to_async(answer_choice)(
                self.served.files, self.session_id, choice, self.served
            )
        except Exception as exc:
            if dbfaults.is_locked(exc):
                await self.send(render_error(await _locked_selection()))
            else:
                log.exception("selection failed in session %s", self.session_id)
                await self.send(render_error("The file selection could not be saved; see the log."))
            # The tab waits for an answer before it draws rows again: this choice has none.
            await self.send(unanswered(choice.selection))
            return
        # The frames below draw it: the follower's poll must not send its own older copy.
        self.served.follower.drawn(self.session_id, "hud")
        for html in answer.to_tab:
            await self.send(html)
        for html in answer.to_session:
            await self._broadcast(html)

    async def _rows(self, ask: TreeAsk) -> None:
        """The Files panel's rows again, for this tab alone: drawn after every choice this
        socket carried before the ask (its frames are taken in order)."""
        try:
            html = await database_sync_to_async(rows_frame)(
                self.served.files, self.session_id, ask, self.served
            )
        except Exception:
            log.exception("the Files panel's rows failed in session %s", self.session_id)
            await self.send(render_error("The Files panel could not be drawn; see the log."))
            return
        if html:
            await self.send(html)

    async def _count_tokens(self) -> None:
        """Count the repository's files and their outlines in the background, one pass of
        each per repository whatever the number of tabs; every tab on the repository sees
        the progress, and a tab that joins a running pass first gets what it has found."""
        repo = self.served.repository.root
        listing = await asyncio.to_thread(git.list_files, repo)
        paths = listing.paths
        send = _sender(self.channel_layer, self.files_group, self.sends)
        counts, outlines, panel = self.served.counts, self.served.outlines, self.served.files

        def tell_all(**fields) -> None:
            send(count_update(panel, repo, paths, **fields))

        def as_json(found: dict) -> dict:
            return {path: count.as_json() for path, count in found.items()}

        def progress(done: int, total: int, fresh: dict) -> None:
            tell_all(counts=as_json(fresh), progress=[done, total])

        known = counts.known(repo, paths)
        if len(known) < len(paths) and not counts.count_in_background(repo, paths, progress):
            reached = [len(known), len(paths)]
            fields = {"counts": as_json(known), "progress": reached}
            await self.send(await asyncio.to_thread(count_update, panel, repo, paths, **fields))
        started = outlines.count_in_background(
            repo, paths, lambda found: tell_all(outline_counts=found)
        )
        if not started and (found := await asyncio.to_thread(outlines.known, repo, paths)):
            fields = {"outline_counts": found}
            await self.send(await asyncio.to_thread(count_update, panel, repo, paths, **fields))

    async def _broadcast(self, html: str) -> None:
        await self.channel_layer.group_send(self.group, {"type": "chat.frame", "html": html})

    async def chat_frame(self, event: dict) -> None:
        await self.send(event["html"])

    async def panels_check(self, event: dict) -> None:
        self.served.follower.nudge(
            self.session_id
        )  # one look per worker, whatever its number of tabs

    async def check_due(self, event: dict) -> None:
        await self.served.host.check_accepted(self.session_id)  # Accept all wrote edits (chat.web)

    async def turn_stop(self, event: dict) -> None:
        self.served.host.stop(self.session_id)  # a no-op unless the turn runs in this process
        self.served.commands.stop(self.session_id)  # a run the person started from a card

    async def turn_snapshot(self, event: dict) -> None:
        await self.served.host.send_snapshot(self.session_id, event["reply_to"])
        if event["reply_to"] == self.channel_name and not await _live_turn(self.session_id):
            # The reply ended before this tab's snapshot, and its finished frame carried no
            # body (the tabs that followed it had one): draw the conversation again.
            await self.send(await database_sync_to_async(ended_frame)(self.session_id))


def _sender(layer, group: str, sends: set[asyncio.Task]) -> Callable[[str], None]:
    """A frame for `group` from a counting thread, sent on the loop that runs now.

    A counting pass (chat.repo.passes) belongs to the process and may outlive the socket
    that started it, and the loop too (the server or a test ending). So the thread hands
    the loop a call, and the send becomes a coroutine only there, in a task `sends` holds
    (the socket awaits those when it goes): a loop that has closed has no tab left to tell,
    and the frame is dropped instead of left an un-awaited coroutine."""
    loop = asyncio.get_running_loop()

    def start(html: str) -> None:
        task = loop.create_task(layer.group_send(group, {"type": "chat.frame", "html": html}))
        sends.add(task)
        task.add_done_callback(_sent)
        task.add_done_callback(sends.discard)

    def send(html: str) -> None:
        try:
            loop.call_soon_threadsafe(start, html)
        except RuntimeError:  # the loop has closed
            log.debug("a counting frame for %s came after its loop closed", group)

    return send


def _sent(task: asyncio.Task) -> None:
    if not task.cancelled() and (error := task.exception()) is not None:
        log.error("a counting frame was not sent", exc_info=error)


async def _locked_selection() -> str:
    path = dbfaults.sqlite_path()
    holder = await asyncio.to_thread(dbfaults.locked_by, path) if path else "locked"
    return (
        f"The database is {holder}: the file selection was not saved. Choose again once "
        "that program has let go of the database."
    )


async def files_changed(served: Served, changes: list) -> None:
    """From the file watcher: its news, drawn by the product with what `served` counts, to
    every tab of the repository and of each session holding a changed file."""
    layer = get_channel_layer()
    repo = served.repository.root
    news = FileNews.of(repo, changes)
    html = await database_sync_to_async(files_frame)(served.files, repo, news)
    await layer.group_send(files_group(repo), {"type": "chat.frame", "html": html})
    for session_id, paths in news.sessions.items():
        frames = await database_sync_to_async(session_frames)(
            served.files, repo, session_id, paths, served
        )
        for html in frames:
            await layer.group_send(session_group(session_id), {"type": "chat.frame", "html": html})


@database_sync_to_async
def _live_turn(session_id: str) -> str | None:
    """The turn running in the session ("" when none); None when there is no session."""
    session = Session.objects.filter(pk=session_id).only("turn_owner", "turn_id", "turn_expires")
    found = session.first()
    return None if found is None else live_turn(found)


def _query(scope: dict) -> dict[str, str]:
    """The socket's query, percent-escapes and `+` decoded (the last of a repeated key)."""
    return dict(parse_qsl(scope.get("query_string", b"").decode("utf-8", "replace")))
