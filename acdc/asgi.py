"""ASGI entry point: HTTP through Django (static files by WhiteNoise's middleware), websockets
through Channels."""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "acdc.settings")

from django.core.asgi import get_asgi_application  # noqa: E402

django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from acdc.access import WebsocketTokenMiddleware  # noqa: E402
from chat.web.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": AllowedHostsOriginValidator(
            WebsocketTokenMiddleware(URLRouter(websocket_urlpatterns))
        ),
    }
)
