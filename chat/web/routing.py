"""The websocket routes: one socket per open session page."""

from __future__ import annotations

from django.urls import re_path

from chat.web.consumers import ChatConsumer

SESSION_SOCKET = r"^ws/session/(?P<session_id>[\w.-]{1,60})/$"

websocket_urlpatterns = [re_path(SESSION_SOCKET, ChatConsumer.as_asgi())]


def session_socket_url(session_id: str) -> str:
    """The path a session page connects its websocket to (matches SESSION_SOCKET)."""
    return f"/ws/session/{session_id}/"
