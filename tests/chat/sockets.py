"""Talking to the chat websocket in tests: connect, send a frame, read frames until one matches.

Shared by every test that drives the consumer through the real ASGI app (`acdc.asgi`), and
by the async tests that run turns directly: `new_session` makes the session they talk in.
Waits are on conditions, never fixed: a frame that matches, or `eventually` for what the
server writes after the last frame. `WAIT` bounds them all; only a broken build waits that
long, so a loaded machine is given plenty.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.conf import settings

from acdc.access import cookie_name
from acdc.asgi import application
from chat.web.broadcast import files_group
from history import services
from history.models import Message, Session

ORIGIN = [(b"origin", b"http://127.0.0.1:8000"), (b"host", b"127.0.0.1:8000")]
WAIT = 30.0
T = TypeVar("T")


class Socket(WebsocketCommunicator):
    """A test websocket as patient as a loaded machine needs (channels waits one second),
    with the page's access cookie (acdc.access) unless the headers carry a cookie or a
    bearer token of their own."""

    def __init__(self, application, path: str, headers=None, subprotocols=None, spec_version=None):
        headers = list(headers or [])
        names = {name for name, _ in headers}
        if not names & {b"cookie", b"authorization"}:
            host = next((v.decode("latin-1") for k, v in headers if k == b"host"), "")
            cookie = f"{cookie_name(host)}={settings.ACDC_TOKEN}"
            headers.append((b"cookie", cookie.encode()))
        super().__init__(application, path, headers, subprotocols, spec_version)

    async def connect(self, timeout: float = WAIT):
        return await super().connect(timeout)

    async def receive_from(self, timeout: float = WAIT):
        return await super().receive_from(timeout)

    async def receive_output(self, timeout: float = WAIT):
        return await super().receive_output(timeout)

    async def disconnect(self, code: int = 1000, timeout: float = WAIT):
        """Close, and wait for the consumer to end by itself (asgiref would cancel one that
        outlives the timeout without a word; a close that hangs is a bug worth a failure)."""
        await self.send_input({"type": "websocket.disconnect", "code": code})
        done, _ = await asyncio.wait({self.future}, timeout=timeout)
        assert done, f"the consumer was still running {timeout} s after the close"
        self.future.result()


@database_sync_to_async
def new_session(*, model: str = "acdc/fake", **state) -> Session:
    """A new session of the served repository; `state` keys are its settings columns
    (grounding, endless) or start its context_state."""
    session = services.session_create(repository=str(settings.ACDC_REPO), model=model)
    columns = {key: state.pop(key) for key in ("grounding", "endless") if key in state}
    if state:
        columns["context_state"] = state
    if columns:
        Session.objects.filter(pk=session.pk).update(**columns)
        session.refresh_from_db()
    return session


@database_sync_to_async
def stored(session):
    return list(Message.objects.filter(session=session).order_by("seq"))


async def eventually(
    read: Callable[[], Awaitable[T]], until: Callable[[T], object], timeout: float = WAIT
) -> T:
    """Read until `until` holds of what was read, and return it; after `timeout` seconds,
    return the last reading (for the test's own assertion to report)."""
    deadline = time.monotonic() + timeout
    while True:
        value = await read()
        if until(value) or time.monotonic() > deadline:
            return value
        await asyncio.sleep(0.05)


async def connect(session_id: str) -> Socket:
    communicator = Socket(application, f"/ws/session/{session_id}/", ORIGIN)
    connected, _ = await communicator.connect()
    assert connected
    return communicator


def counting_progress(frame: str) -> bool:
    """A token-counting progress frame of the Files panel (token or outline counts): it
    arrives whenever the background count of the repository gets on, unrelated to any turn.
    (The rows a choice or a tool changed carry count cells too, but name a choice.)"""
    counting = 'id="picker-progress"' in frame or re.search(r'id="[to][0-9A-Za-z_-]{11}"', frame)
    answer = frame.startswith('<div id="picker-update" hx-swap-oob="true" hidden data-selection=')
    return frame.startswith('<div id="picker-update"') and bool(counting) and not answer


async def next_frame(communicator, timeout: float = WAIT) -> str:
    """The next frame that is not counting progress."""
    while True:
        frame = await communicator.receive_from(timeout=timeout)
        if not counting_progress(frame):
            return frame


async def frames_until(communicator, needle: str, timeout: float = WAIT) -> list[str]:
    frames = []
    while True:
        try:
            frame = await communicator.receive_from(timeout=timeout)
        except TimeoutError:
            seen = "\n".join(f"  {frame[:160]!r}" for frame in frames) or "  (none)"
            raise TimeoutError(f"no frame with {needle!r} in {timeout} s; seen:\n{seen}") from None
        if counting_progress(frame):
            continue
        frames.append(frame)
        if needle in frame:
            return frames


async def send(communicator, **fields) -> None:
    await communicator.send_to(text_data=json.dumps({**fields, "HEADERS": {"HX-Request": "true"}}))


async def in_files_group(tab) -> None:
    """Until the tab has joined the repository's group (its connect does that after the
    handshake): a probe sent to the group comes back to it."""
    group = files_group(settings.ACDC_REPO)
    for _ in range(120):  # receive_nothing, not a timed receive: that would end the app
        await get_channel_layer().group_send(group, {"type": "chat.frame", "html": "probe"})
        while not await tab.receive_nothing(timeout=0.5):
            if await tab.receive_from() == "probe":
                return
    raise AssertionError("the tab never joined the repository's group")
