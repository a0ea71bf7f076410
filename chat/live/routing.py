"""The websocket routes: one socket per open session page; any other path is refused.

A path no route matches would raise inside Channels' router (a traceback in the log, and a
500 at the handshake), so the last route takes every other path and closes it before the
handshake completes (the browser sees a 403). The session's path is the pages'
(`chat.web.broadcast.SESSION_SOCKET`, beside the URL a page is given to connect to).
"""

from __future__ import annotations

from django.urls import re_path

from chat.live.consumers import ChatConsumer
from chat.web.broadcast import SESSION_SOCKET


async def refuse_socket(scope: dict, receive, send) -> None:
    """Any websocket path that is not a session's: closed at the handshake."""
    await receive()  # websocket.connect
    await send({"type": "websocket.close"})


websocket_urlpatterns = [
    re_path(SESSION_SOCKET, ChatConsumer.as_asgi()),
    re_path(r"", refuse_socket),
]
