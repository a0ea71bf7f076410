"""The websocket of one chat session: parse frames, run turns, relay frames.

Thin by design: parsing lives in `protocol`, the turn in `turns`, rendering in `frames`.
Frames of a turn go to the session's group, so every tab (on any worker) showing the
session sees the stream; Stop is broadcast the same way to whichever worker runs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from pathlib import Path

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.layers import get_channel_layer
from django.conf import settings

from chat.repo import git, picker, sessionsets
from chat.repo.watcher import WATCHERS
from chat.turn import context
from chat.turn.after_turn import after_turn_tasks, run_compaction
from chat.turn.events import TurnFinished
from chat.turn.turns import TurnRejected, run_turn
from chat.web.conversation import render_session_event
from chat.web.frames import DeltaCoalescer, picker_message, render_error, render_hud
from chat.web.protocol import FrameError, parse_frame
from history.models import Session

log = logging.getLogger(__name__)


class ChatConsumer(AsyncWebsocketConsumer):
    turn: asyncio.Task | None = None
    # The turn task has delivered its reply and is in its after-reply work (usage, HUD,
    # checkpoint, compaction): a message sent now waits for it instead of being refused.
    compacting = False

    async def connect(self) -> None:
        self.session_id = self.scope["url_route"]["kwargs"]["session_id"]
        self.group = f"session.{self.session_id}"
        await self.accept()
        if not await _session_exists(self.session_id):
            await self.send(render_error(f"There is no session {self.session_id!r}."))
            await self.close(code=4404)
            return
        await self.channel_layer.group_add(self.group, self.channel_name)
        self.files_group = files_group(settings.ACDC_REPO)
        await self.channel_layer.group_add(self.files_group, self.channel_name)
        await self._count_tokens()
        self.repository = sessionsets.repository()
        await WATCHERS.attach(self.repository, files_changed)

    async def disconnect(self, code: int) -> None:
        await self.channel_layer.group_discard(self.group, self.channel_name)
        if getattr(self, "files_group", None):
            await self.channel_layer.group_discard(self.files_group, self.channel_name)
        if getattr(self, "repository", None) is not None:
            await WATCHERS.detach(self.repository)
        if self.turn is not None:
            self.turn.cancel()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None):
        try:
            frame = parse_frame(text_data, bytes_data, max_bytes=settings.ACDC_MAX_FRAME_BYTES)
        except FrameError as exc:
            await self.send(render_error(str(exc)))
            return
        if frame.action == "stop":
            await self.channel_layer.group_send(self.group, {"type": "chat.stop"})
        elif frame.action == "select":
            await self._select(frame.paths)
        elif self.turn is not None and not self.compacting:
            await self.send(render_error("A reply is still streaming: press Stop first."))
        elif self.turn is not None:
            # Compacting after the last reply: this message waits for it, then runs.
            self.turn = asyncio.create_task(self._after(self.turn, frame))
        elif frame.action == "compact":
            self.turn = asyncio.create_task(self._compact(frame.focus))
        else:
            self.turn = asyncio.create_task(
                self._run_turn(frame.message, frame.model, frame.images)
            )

    async def _after(self, previous: asyncio.Task, frame) -> None:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.shield(previous)
        if frame.action == "compact":
            await self._compact(frame.focus)
        else:
            await self._run_turn(frame.message, frame.model, frame.images)

    async def _compact(self, focus: str) -> None:
        self.compacting = True
        try:
            await run_compaction(self.session_id, self._report, focus=focus, force=True)
        except asyncio.CancelledError:
            pass
        finally:
            self._release()

    async def _run_turn(self, message: str, model: str, images: tuple[str, ...] = ()) -> None:
        coalescer = DeltaCoalescer(self._broadcast)
        self.compacting = False

        async def emit(event) -> None:
            await coalescer.emit(event)
            if isinstance(event, TurnFinished):
                self.compacting = True  # the reply is out: what follows can be waited for

        try:
            finished = await run_turn(
                session_id=self.session_id,
                user_text=message,
                model=model,
                emit=emit,
                images=images,
            )
            if finished.status == "complete":
                await after_turn_tasks(self.session_id, self._report)
        except TurnRejected as exc:
            await self.send(render_error(str(exc)))
        except asyncio.CancelledError:
            pass
        except Exception:
            log.exception("turn failed in session %s", self.session_id)
            await self.send(render_error("Something went wrong on the server; see its log."))
        finally:
            self._release()

    def _release(self) -> None:
        """The turn task ends; a message queued behind it has its own task by now."""
        if self.turn is asyncio.current_task():
            self.turn = None
            self.compacting = False

    async def _select(self, paths: tuple[str, ...]) -> None:
        try:
            problems, hud = await context.set_selection(self.session_id, paths)
        except Exception:
            log.exception("selection failed in session %s", self.session_id)
            await self.send(render_error("The file selection could not be saved; see the log."))
            return
        for problem in problems:
            await self.send(render_error(problem))
        active = await database_sync_to_async(_active_paths)(self.session_id)
        await self._broadcast(render_hud(hud))
        await self._broadcast(picker_message(active=active))

    async def _count_tokens(self) -> None:
        """Count the repository's files in the background (once per repository, whatever
        the number of tabs); every tab on the repository sees the progress."""
        repo = Path(settings.ACDC_REPO)
        listing = await asyncio.to_thread(git.list_files, repo)
        paths = listing.paths
        loop = asyncio.get_running_loop()
        layer, group = self.channel_layer, self.files_group

        def progress(done: int, total: int, fresh: dict) -> None:
            counts = {path: count.as_json() for path, count in fresh.items()}
            text = picker_message(counts=counts, progress=[done, total])
            message = {"type": "chat.frame", "html": text}
            asyncio.run_coroutine_threadsafe(layer.group_send(group, message), loop)

        if len(picker.COUNTS.known(repo, paths)) < len(paths):
            picker.COUNTS.count_in_background(repo, paths, progress)

    async def _report(self, event) -> None:
        await self._broadcast(await database_sync_to_async(render_session_event)(event))

    async def _broadcast(self, html: str) -> None:
        await self.channel_layer.group_send(self.group, {"type": "chat.frame", "html": html})

    async def chat_frame(self, event: dict) -> None:
        await self.send(event["html"])

    async def chat_stop(self, event: dict) -> None:
        if self.turn is not None:
            self.turn.cancel()


def _active_paths(session_id: str) -> list[str]:
    return sessionsets.active_paths(Session.objects.get(pk=session_id))


async def files_changed(changes: list) -> None:
    """From the file watcher: mark changed files in every tab of the repository, and
    bring the HUD of each session holding them up to date."""
    layer = get_channel_layer()
    repo = Path(settings.ACDC_REPO)
    known = [c for c in changes if c.outcome in ("updated", "deleted")]
    present = {c.path: (repo / c.path).is_file() for c in changes}
    update = {
        "changed": [c.path for c in known if present[c.path]],
        "added": [p for p, here in present.items() if here],
        "removed": [p for p, here in present.items() if not here],
    }
    fresh = [p for p, here in present.items() if here]
    if fresh:  # new or edited contents get their token counts at once
        counts = await database_sync_to_async(picker.COUNTS.count)(repo, fresh)
        update["counts"] = {p: c.as_json() for p, c in counts.items()}
    text = picker_message(**{k: v for k, v in update.items() if v})
    await layer.group_send(files_group(repo), {"type": "chat.frame", "html": text})
    for session_id in sorted({s for c in known for s in c.sessions}):
        try:
            hud = await database_sync_to_async(context.refresh_sets)(session_id)
        except Session.DoesNotExist:
            continue
        frame = {"type": "chat.frame", "html": render_hud(hud)}
        await layer.group_send(f"session.{session_id}", frame)


def files_group(repo) -> str:
    """The channel group of every tab showing a session of this repository."""
    return "files." + hashlib.sha1(str(repo).encode()).hexdigest()[:20]


@database_sync_to_async
def _session_exists(session_id: str) -> bool:
    return Session.objects.filter(pk=session_id).exists()
