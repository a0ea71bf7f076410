"""The websocket routes: one socket per open session page; any other path is refused.

A path no route matches would raise inside Channels' router (a traceback in the log, and a
500 at the handshake), so the last route takes every other path and closes it before the
handshake completes (the browser sees a 403).
"""

from __future__ import annotations

from django.urls import re_path

from chat.web.consumers import DREW_STREAMING, SEEN, ChatConsumer

SESSION_SOCKET = r"^ws/session/(?P<session_id>[\w.-]{1,60})/$"


async def refuse_socket(scope: dict, receive, send) -> None:
    """Any websocket path that is not a session's: closed at the handshake."""
    await receive()  # websocket.connect
    await send({"type": "websocket.close"})


websocket_urlpatterns = [
    re_path(SESSION_SOCKET, ChatConsumer.as_asgi()),
    re_path(r"", refuse_socket),
]


def session_socket_url(session_id: str, *, streaming: bool = False, seen: str = "") -> str:
    """The path a session page connects its websocket to (matches SESSION_SOCKET); a page
    drawn with a reply streaming says so, so that a reply which ends before the socket joins
    is drawn again instead of staying "Streaming…"; `seen` is the session's version the page
    drew (chat.web.panels), so that a change made meanwhile reaches it too."""
    query = [DREW_STREAMING] if streaming else []
    query += [f"{SEEN}={seen}"] if seen else []
    return f"/ws/session/{session_id}/" + (f"?{'&'.join(query)}" if query else "")
