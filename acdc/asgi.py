"""ASGI entry point: HTTP through Django (static files by WhiteNoise's middleware), websockets
through Channels, once their Origin is this server's own and they carry the access token,
as its cookie or a bearer header (acdc.access), on every bind. `acdc chat`'s one path is
answered in front of Django (acdc.terminal.endpoint)."""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "acdc.settings")

from django.core.asgi import get_asgi_application  # noqa: E402

django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from acdc.access import WebsocketOriginMiddleware, WebsocketTokenMiddleware  # noqa: E402
from acdc.terminal.endpoint import TerminalEndpoint  # noqa: E402
from chat.live.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": TerminalEndpoint(django_asgi_app),
        "websocket": WebsocketOriginMiddleware(
            WebsocketTokenMiddleware(URLRouter(websocket_urlpatterns))
        ),
    }
)
