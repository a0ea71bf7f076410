"""Every open tab's panels follow its session, whatever changed it and wherever.

A change this server makes outside a turn (undo a compaction, a checkpoint, a rollback,
another model) announces itself (`chat.web.broadcast.announce`): the session's channel
group gets a `panels.check`, so every worker with a tab of the session looks at once. A
change made elsewhere, such as `acdc chat` in its own process on the same database (the
in-memory channel layer does not cross processes, and the CLI never joins Redis), is found
by a cheap poll of the same version (`version.read`, one query) every ACDC_PANEL_POLL_MS
while a tab of the session is open here and no turn runs. Either way the tabs get only the
panels that changed: the conversation drawn again (not after a turn this worker streamed
to them), the Context panel and the name of the Files panel's sets from the saved header
(figured again when the project instructions on disk changed: the file watcher wakes
every loop at once when one comes, goes or is written), and a note that tells panels.js
to fetch the session tools or the model chooser again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from channels.db import database_sync_to_async
from django.conf import settings
from django.template.loader import render_to_string

from chat.live.turnhost import LocalTabs, TurnHost
from chat.llm.runtime import chat_model
from chat.repo import indexing, sessionsets
from chat.session import Wiring, version
from chat.session.setchanges import current_hud
from chat.session.sets import Selection
from chat.web.conversation import ended_frame
from chat.web.fragments import render_hud
from history.models import Session

log = logging.getLogger(__name__)
Send = Callable[[str], Awaitable[None]]


class PanelFollower:
    """One loop per session with a tab in this process: it wakes on `nudge` or after the
    poll interval, reads the session's version and sends the tabs what changed."""

    def __init__(self, host: TurnHost, tabs: LocalTabs) -> None:
        self.host, self.tabs = host, tabs
        self._loops: dict[str, asyncio.Task] = {}
        self._wake: dict[str, asyncio.Event] = {}
        self._seen: dict[str, version.Version] = {}
        self._drawn: dict[str, set[str]] = {}  # panels this worker's own frames brought up to date

    async def watch(self, session_id: str, seen: str, send: Send) -> None:
        """A tab of the session connected here: follow the session from now on, and send
        the tab what changed since its page was drawn (`seen`, the page's version token).
        One reading serves both, so nothing changed between them goes unseen."""
        now = await _read(session_id, self.host.repository.root)
        if session_id not in self._loops and now is not None:
            self._seen[session_id] = now
            self._wake[session_id] = asyncio.Event()
            self._loops[session_id] = asyncio.create_task(self._run(session_id))
        if now is None or now.busy or not (changed := now.changed_since(seen)):
            return
        for html in await database_sync_to_async(frames)(session_id, changed, now, self.host):
            await send(html)

    def forget(self, session_id: str) -> None:
        """No tab of the session is left here."""
        loop = self._loops.pop(session_id, None)
        if loop is not None:
            loop.cancel()
        self._wake.pop(session_id, None)
        self._seen.pop(session_id, None)
        self._drawn.pop(session_id, None)

    def nudge(self, session_id: str) -> None:
        if (wake := self._wake.get(session_id)) is not None:
            wake.set()

    def drawn(self, session_id: str, *parts: str) -> None:
        """This worker's own frames brought these panels of every tab up to date: the next
        look does not draw them again (the others may still be stale)."""
        if session_id in self._loops:
            self._drawn.setdefault(session_id, set()).update(parts)

    def nudge_all(self) -> None:
        """Something every session's panels show changed on disk (the project
        instructions): every session with a tab here looks at once."""
        for session_id in list(self._wake):
            self.nudge(session_id)

    def turn_ended(self, session_id: str) -> None:
        """This worker's turn streamed the conversation and its HUD; the session tools
        (the automatic checkpoint) and the model box may still be stale."""
        self.drawn(session_id, "conversation", "hud")
        self.nudge(session_id)

    async def close(self) -> None:
        loops = list(self._loops.values())
        for session_id in list(self._loops):
            self.forget(session_id)
        await asyncio.gather(*loops, return_exceptions=True)

    async def _run(self, session_id: str) -> None:
        poll = settings.ACDC_PANEL_POLL_MS / 1000
        try:
            while self.tabs.of(session_id):
                wake = self._wake[session_id]
                with contextlib.suppress(TimeoutError):  # the poll's turn
                    await asyncio.wait_for(wake.wait(), timeout=poll)
                wake.clear()
                if not self.host.running(session_id):
                    await self._check(session_id)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("following the panels of session %s failed", session_id)
        finally:
            if self._loops.get(session_id) is asyncio.current_task():
                self.forget(session_id)

    async def _check(self, session_id: str) -> None:
        try:
            now = await _read(session_id, self.host.repository.root)
        except Exception:  # a locked or busy database: the next poll looks again
            log.debug("reading the version of session %s failed", session_id, exc_info=True)
            return
        if now is None or now.busy:
            return  # a turn holds the session: its end brings the panels up to date
        before = self._seen.get(session_id)
        drawn = self._drawn.pop(session_id, set())
        if before is not None and now.instructions != before.instructions:
            # A turn's HUD was figured from the instructions it read at its start: a file
            # that came while it ran (or just after) is not in it.
            drawn.discard("hud")
        changed = now.changed(before) - drawn
        self._seen[session_id] = now
        if not changed:
            return
        drawn = await database_sync_to_async(frames)(session_id, changed, now, self.host)
        if self.host.running(
            session_id
        ):  # a turn began meanwhile: its frames must not be drawn over
            self._seen[session_id] = before
            return
        for html in drawn:
            for send in list(self.tabs.of(session_id).values()):
                try:
                    await send(html)
                except Exception:  # a tab closing as the frame goes out
                    log.debug("a panel frame to a closing tab was dropped", exc_info=True)


@database_sync_to_async
def _read(session_id: str, root: Path) -> version.Version | None:
    return version.read(session_id, root)


def frames(session_id: str, changed: set[str], now: version.Version, wiring: Wiring) -> list[str]:
    """The frames that bring a tab's `changed` panels up to date (reads the database)."""
    session = Session.objects.get(pk=session_id)
    out = []
    if "conversation" in changed:
        out.append(ended_frame(session_id))
    if changed & {"conversation", "hud"}:
        hud = current_hud(session, wiring)
        if hud:
            out.append(render_hud(hud))
        out.append(_sets_message(session, hud or {}, wiring.repository.indexed()))
    stale = {
        "tools": now.parts["tools"] if "tools" in changed else "",
        "model": chat_model(now.model) if "model" in changed else "",
    }
    title = session.display_title if "conversation" in changed else ""  # a first message names it
    if any(stale.values()) or title:
        context = {"stale": stale, "title": title, "oob": True}
        out.append(render_to_string("chat/_panels_stale.html", context))
    return out


def _sets_message(session: Session, hud: dict, repo: indexing.Repository) -> str:
    """The name of the Files panel's sets as the session holds them (`acdc chat --add`
    changes them): a tab whose rows were drawn from others draws them again."""
    active, outlines, pinned = sessionsets.file_choice(session, repo)
    shed = frozenset(hud.get("shed", []))
    held = Selection(frozenset(active), frozenset(outlines), frozenset(pinned), shed)
    return render_to_string("chat/_picker_sets.html", {"sets": held.digest()})
