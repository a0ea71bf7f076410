"""The access token that guards a non-loopback bind, on HTTP and on websockets.

When `ACDC_TOKEN` is set every request must carry it: as `?token=` on a first visit (which
sets an HttpOnly cookie and redirects to the clean URL), as that cookie, or as a bearer
header. Websocket handshakes carry the cookie. Comparisons are constant-time.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from http.cookies import SimpleCookie
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden, HttpResponseRedirect

COOKIE_NAME = "acdc_token"


def token_matches(given: str | None) -> bool:
    expected = settings.ACDC_TOKEN
    return bool(given) and secrets.compare_digest(given.encode(), expected.encode())


class AccessTokenMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not settings.ACDC_TOKEN:
            return self.get_response(request)
        from_query = request.GET.get("token")
        if from_query is not None:
            return self._accept_query_token(request, from_query)
        bearer = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if token_matches(request.COOKIES.get(COOKIE_NAME)) or token_matches(bearer):
            return self.get_response(request)
        return HttpResponseForbidden(
            "acdc: this server needs its access token. Open the URL printed at start "
            "(it ends in ?token=...).",
            content_type="text/plain",
        )

    def _accept_query_token(self, request: HttpRequest, token: str) -> HttpResponse:
        if not token_matches(token):
            return HttpResponseForbidden("acdc: wrong access token.", content_type="text/plain")
        query = request.GET.copy()
        del query["token"]
        clean = request.path + (f"?{query.urlencode()}" if query else "")
        response = HttpResponseRedirect(clean)
        response.set_cookie(COOKIE_NAME, token, httponly=True, samesite="Strict")
        return response


class WebsocketTokenMiddleware:
    """ASGI middleware: refuses websocket handshakes without the token cookie."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> Any:
        refused = scope["type"] == "websocket" and settings.ACDC_TOKEN
        if refused and not token_matches(_cookie_from_scope(scope)):
            await send({"type": "websocket.close", "code": 4403})
            return None
        return await self.app(scope, receive, send)


def _cookie_from_scope(scope: dict) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"cookie":
            cookie = SimpleCookie()
            cookie.load(value.decode("latin-1"))
            if COOKIE_NAME in cookie:
                return cookie[COOKIE_NAME].value
    return None
