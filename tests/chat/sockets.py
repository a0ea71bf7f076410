"""Talking to the chat websocket in tests: connect, send a frame, read frames until one matches.

Shared by every test that drives the consumer through the real ASGI app (`acdc.asgi`).
"""

from __future__ import annotations

import json

from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings

from acdc.asgi import application
from history import services
from history.models import Message

ORIGIN = [(b"origin", b"http://127.0.0.1:8000")]


@database_sync_to_async
def new_session():
    return services.session_create(repository=str(settings.ACDC_REPO))


@database_sync_to_async
def stored(session):
    return list(Message.objects.filter(session=session).order_by("seq"))


async def connect(session_id: str) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(application, f"/ws/session/{session_id}/", ORIGIN)
    connected, _ = await communicator.connect()
    assert connected
    return communicator


def counting_progress(frame: str) -> bool:
    """A token-counting progress frame of the Files panel: it arrives whenever the
    background count of the repository gets on, unrelated to any turn."""
    return frame.startswith('{"type":"picker"') and '"progress":' in frame


async def next_frame(communicator, timeout: float = 10) -> str:
    """The next frame that is not counting progress."""
    while True:
        frame = await communicator.receive_from(timeout=timeout)
        if not counting_progress(frame):
            return frame


async def frames_until(communicator, needle: str, timeout: float = 10) -> list[str]:
    frames = []
    while True:
        frame = await communicator.receive_from(timeout=timeout)
        if counting_progress(frame):
            continue
        frames.append(frame)
        if needle in frame:
            return frames


async def send(communicator, **fields) -> None:
    await communicator.send_to(text_data=json.dumps({**fields, "HEADERS": {"HX-Request": "true"}}))
