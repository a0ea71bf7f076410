from __future__ import annotations

from django.urls import re_path

from chat.web.consumers import ChatConsumer

websocket_urlpatterns = [
    re_path(r"^ws/session/(?P<session_id>[\w.-]{1,60})/$", ChatConsumer.as_asgi()),
]
