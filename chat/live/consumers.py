"""The websocket of one chat session: parse frames, hand work to the turn host, relay frames.

Thin by design: parsing lives in `protocol`, turns in `turnhost` (they belong to the
session, not to this socket), rendering in `frames`. Frames of a turn go to the session's
group, so every tab (on any worker) showing the session sees the stream; Stop goes to the
session's control group, so it reaches whichever worker runs the turn. The groups' names
and the socket's query keys are the pages' (`chat.web.broadcast`), which send to them too.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.layers import get_channel_layer
from django.conf import settings

from chat.live.follower import FOLLOWER
from chat.live.keepwarm import WARMER
from chat.live.protocol import ClientFrame, FrameError, parse_frame
from chat.live.turnhost import (
    HOST,
    LOCAL_TABS,
    ask_snapshot,
    ask_stop,
    end_dead_turn,
)
from chat.repo import git, outlines, picker, sessionsets
from chat.repo.watcher import WATCHERS
from chat.turn import context
from chat.turn.session import live_turn
from chat.web.broadcast import DREW_STREAMING, SEEN, files_group, session_group
from chat.web.conversation import ended_frame
from chat.web.edits.cards import pending_frames
from chat.web.fragments import render_error, render_hud
from chat.web.panels.fileupdates import picker_update, unlisted
from chat.web.panels.selection import selection_update
from chat.web.panels.tree import file_rows
from history import dbfaults
from history.models import Session

log = logging.getLogger(__name__)


class ChatConsumer(AsyncWebsocketConsumer):
    async def connect(self) -> None:
        self.session_id = self.scope["url_route"]["kwargs"]["session_id"]
        self.group = session_group(self.session_id)
        await self.accept()
        live = await _live_turn(self.session_id)
        if live is None:
            await self.send(render_error(f"There is no session {self.session_id!r}."))
            await self.close(code=4404)
            return
        await self.channel_layer.group_add(self.group, self.channel_name)
        LOCAL_TABS.add(self.session_id, self.channel_name, self.send)
        if live:  # a turn is under way: what has streamed so far, then the live frames
            await ask_snapshot(self.session_id, self.channel_name)
        else:  # someone is looking again: keep the cache warm while they read
            if not await end_dead_turn(self.session_id) and _drew_streaming(self.scope):
                # The reply the page drew streaming ended before this socket joined the
                # group, so its finished frame went by: draw the conversation again.
                await self.send(await database_sync_to_async(ended_frame)(self.session_id))
            WARMER.wake(self.session_id)
        await FOLLOWER.watch(self.session_id, _query(self.scope).get(SEEN, ""), self.send)
        self.files_group = files_group(settings.ACDC_REPO)
        await self.channel_layer.group_add(self.files_group, self.channel_name)
        await self._count_tokens()
        self.repository = sessionsets.repository()
        await WATCHERS.attach(self.repository, files_changed)

    async def disconnect(self, code: int) -> None:
        # The turn goes on without this tab: it belongs to the session (see turnhost).
        LOCAL_TABS.discard(self.session_id, self.channel_name)
        if not LOCAL_TABS.of(self.session_id):
            WARMER.cancel(self.session_id)  # nobody here to come back to it
            FOLLOWER.forget(self.session_id)
        await self.channel_layer.group_discard(self.group, self.channel_name)
        if getattr(self, "files_group", None):
            await self.channel_layer.group_discard(self.files_group, self.channel_name)
        if getattr(self, "repository", None) is not None:
            await WATCHERS.detach(self.repository)

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
        else:
            await HOST.submit(self.session_id, frame, self.channel_name)

    async def _select(self, frame: ClientFrame) -> None:
        try:
            before = await database_sync_to_async(_active_paths)(self.session_id)
            problems, hud = await context.set_selection(
                self.session_id,
                frame.paths,
                confirmed=frozenset(frame.confirm),
                outlines=frozenset(frame.outline),
            )
        except Exception as exc:
            if dbfaults.is_locked(exc):
                await self.send(render_error(await _locked_selection()))
                return
            log.exception("selection failed in session %s", self.session_id)
            await self.send(render_error("The file selection could not be saved; see the log."))
            return
        # The frames below draw it: the follower's poll must not send its own older copy.
        FOLLOWER.drawn(self.session_id, "hud")
        for problem in problems:
            await self.send(render_error(problem))
        after = await database_sync_to_async(_active_paths)(self.session_id)
        # `answers` lets the tab that chose ignore answers to choices it has since changed.
        over = {"shed": hud.get("shed", []), "budget": hud.get("window")}
        repo, chosen = Path(settings.ACDC_REPO), {"before": before, "after": after}
        rows = selection_update  # the rows whose state the choice changed, as fragments
        answer = await asyncio.to_thread(rows, repo, answers=frame.selection, **chosen, **over)
        await self._broadcast(answer)
        # After the sets it reflects: a tab still waiting for a newer choice moves these
        # figures by what that choice changes (picker.js).
        await self._broadcast(render_hud(hud))

    async def _count_tokens(self) -> None:
        """Count the repository's files and their outlines in the background, one pass of
        each per repository whatever the number of tabs; every tab on the repository sees
        the progress, and a tab that joins a running pass first gets what it has found."""
        repo = Path(settings.ACDC_REPO)
        listing = await asyncio.to_thread(git.list_files, repo)
        paths = listing.paths
        loop = asyncio.get_running_loop()
        layer, group = self.channel_layer, self.files_group

        def tell_all(**fields) -> None:
            message = {"type": "chat.frame", "html": picker_update(repo, paths=paths, **fields)}
            asyncio.run_coroutine_threadsafe(layer.group_send(group, message), loop)

        def as_json(found: dict) -> dict:
            return {path: count.as_json() for path, count in found.items()}

        def progress(done: int, total: int, fresh: dict) -> None:
            tell_all(counts=as_json(fresh), progress=[done, total])

        known = picker.COUNTS.known(repo, paths)
        if len(known) < len(paths) and not picker.COUNTS.count_in_background(repo, paths, progress):
            reached = [len(known), len(paths)]
            fields = {"counts": as_json(known), "progress": reached}
            await self.send(await asyncio.to_thread(picker_update, repo, paths=paths, **fields))
        started = outlines.count_in_background(
            repo, paths, lambda found: tell_all(outline_counts=found)
        )
        if not started and (found := await asyncio.to_thread(outlines.known, repo, paths)):
            fields = {"outline_counts": found}
            await self.send(await asyncio.to_thread(picker_update, repo, paths=paths, **fields))

    async def _broadcast(self, html: str) -> None:
        await self.channel_layer.group_send(self.group, {"type": "chat.frame", "html": html})

    async def chat_frame(self, event: dict) -> None:
        await self.send(event["html"])

    async def panels_check(self, event: dict) -> None:
        FOLLOWER.nudge(self.session_id)  # one look per worker, whatever its number of tabs

    async def turn_stop(self, event: dict) -> None:
        HOST.stop(self.session_id)  # a no-op unless the turn runs in this process

    async def turn_snapshot(self, event: dict) -> None:
        await HOST.send_snapshot(self.session_id, event["reply_to"])
        if event["reply_to"] == self.channel_name and not await _live_turn(self.session_id):
            # The reply ended before this tab's snapshot, and its finished frame carried no
            # body (the tabs that followed it had one): draw the conversation again.
            await self.send(await database_sync_to_async(ended_frame)(self.session_id))


async def _locked_selection() -> str:
    path = dbfaults.sqlite_path()
    holder = await asyncio.to_thread(dbfaults.locked_by, path) if path else "locked"
    return (
        f"The database is {holder}: the file selection was not saved. Choose again once "
        "that program has let go of the database."
    )


def _active_paths(session_id: str) -> tuple[list[str], list[str]]:
    """The active files, and those of them sent as their outline."""
    session = Session.objects.get(pk=session_id)
    entries = [e for e in sessionsets.entries(session) if e.type == "file" and e.active]
    return [e.path for e in entries], [e.path for e in entries if e.outline]


async def files_changed(changes: list) -> None:
    """From the file watcher: mark changed files in every tab of the repository, and
    bring the HUD of each session holding them up to date."""
    layer = get_channel_layer()
    repo = Path(settings.ACDC_REPO)
    known = [c for c in changes if c.outcome in ("updated", "deleted", "written")]
    present = {c.path: (repo / c.path).is_file() for c in changes}
    update = {  # "edited" marks a change the model has not seen; acdc's own write it has
        "changed": [c.path for c in known if present[c.path] and c.outcome != "written"],
        "added": [p for p, here in present.items() if here],
        "removed": [p for p, here in present.items() if not here],
    }
    fresh = [p for p, here in present.items() if here]
    if fresh:  # new or edited contents get their token counts at once
        counts = await database_sync_to_async(picker.COUNTS.count)(repo, fresh)
        update["counts"] = {p: c.as_json() for p, c in counts.items()}
        update["outline_counts"] = await asyncio.to_thread(outlines.counts, repo, fresh)
    if new := unlisted(repo, update["added"]):  # drawn for the folders open in the pages
        update["rows"] = await asyncio.to_thread(file_rows, repo, new)
    text = await asyncio.to_thread(picker_update, repo, **update)
    await layer.group_send(files_group(repo), {"type": "chat.frame", "html": text})
    for session_id in sorted({s for c in known for s in c.sessions}):
        try:
            hud = await database_sync_to_async(context.refresh_sets)(session_id)
        except Session.DoesNotExist:
            continue
        frame = {"type": "chat.frame", "html": render_hud(hud)}
        await layer.group_send(session_group(session_id), frame)
        paths = [c.path for c in known if session_id in c.sessions]
        if cards := await database_sync_to_async(pending_frames)(session_id, paths):
            await layer.group_send(session_group(session_id), {"type": "chat.frame", "html": cards})


@database_sync_to_async
def _live_turn(session_id: str) -> str | None:
    """The turn running in the session ("" when none); None when there is no session."""
    session = Session.objects.filter(pk=session_id).only("turn_owner", "turn_id", "turn_expires")
    found = session.first()
    return None if found is None else live_turn(found)


def _drew_streaming(scope: dict) -> bool:
    return DREW_STREAMING in scope.get("query_string", b"").decode("latin-1").split("&")


def _query(scope: dict) -> dict[str, str]:
    pairs = scope.get("query_string", b"").decode("latin-1").split("&")
    return dict(pair.split("=", 1) for pair in pairs if "=" in pair)
