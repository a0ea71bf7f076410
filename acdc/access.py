"""Who may talk to acdc: the access token, and the origin of a websocket handshake.

Every request but a static file must carry the token, on loopback too (Jupyter's rule: any
local process, a run of a declared command among them, could otherwise act as the person):
as `?token=` on a visit (which sets an HttpOnly SameSite=Strict cookie and redirects to
the clean URL), as that cookie, or as an `Authorization: Bearer` header. Websocket
handshakes carry the cookie or the same bearer header. A request without it changes
nothing: a page gets a 403 page saying to open the printed address (`acdc url` prints it
again), anything else a plain 403. The token is ACDC_TOKEN or the one kept in the data
folder (`acdc.datadir.access_token`), which a run cannot see. Comparisons are constant-time.
The cookie's name carries the port the browser addressed, as cookies ignore ports: two
servers on one machine do not overwrite each other's.

A websocket is accepted only from a page of this server: its Origin must be
`<scheme>://<Host>` of the handshake itself (scheme, host and port), and that host must be
one of ALLOWED_HOSTS (a rebound DNS name agrees with itself, not with ALLOWED_HOSTS). A
browser cannot forge either header; other clients are the token's business.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden, HttpResponseRedirect
from django.http.request import split_domain_port, validate_host
from django.shortcuts import render

COOKIE_PREFIX = "acdc_token"


def cookie_name(host: str) -> str:
    """The token cookie's name for a page addressed as `host` (the Host header):
    `acdc_token_8000` for `127.0.0.1:8000`, `acdc_token` without a port."""
    _, port = split_domain_port(host)
    return f"{COOKIE_PREFIX}_{port}" if port.isdigit() else COOKIE_PREFIX


def token_matches(given: str | None) -> bool:
    expected = settings.ACDC_TOKEN
    return bool(given and expected) and secrets.compare_digest(given.encode(), expected.encode())


def bearer_token(authorization: str) -> str | None:
    """The token of an `Authorization: Bearer <token>` header (the scheme is
    case-insensitive, RFC 9110), else None. One rule for HTTP and the websocket."""
    scheme, _, token = authorization.strip().partition(" ")
    return (token.strip() or None) if scheme.lower() == "bearer" else None


class AccessTokenMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        from_query = request.GET.get("token")
        if from_query is not None:
            return self._accept_query_token(request, from_query)
        cookie = request.COOKIES.get(cookie_name(request.headers.get("Host", "")))
        bearer = bearer_token(request.headers.get("Authorization", ""))
        if token_matches(cookie) or token_matches(bearer):
            return self.get_response(request)
        return refusal(request, wrong=False)

    def _accept_query_token(self, request: HttpRequest, token: str) -> HttpResponse:
        if not token_matches(token):
            return refusal(request, wrong=True)
        query = request.GET.copy()
        del query["token"]
        clean = request.path + (f"?{query.urlencode()}" if query else "")
        response = HttpResponseRedirect(clean)
        name = cookie_name(request.headers.get("Host", ""))
        response.set_cookie(name, token, httponly=True, samesite="Strict")
        return response


def refusal(request: HttpRequest, *, wrong: bool) -> HttpResponse:
    """403: a page a person can act on for a browser's navigation, one line for the rest
    (htmx, fetches, clients)."""
    navigation = request.method in ("GET", "HEAD") and "HX-Request" not in request.headers
    if navigation and "text/html" in request.headers.get("Accept", ""):
        return render(request, "acdc/forbidden.html", {"wrong": wrong}, status=403)
    reason = "wrong access token" if wrong else "this server needs its access token"
    return HttpResponseForbidden(
        f"acdc: {reason}. Open the URL printed at start (it ends in ?token=...), or run "
        "`acdc url` in the repository to print it again.",
        content_type="text/plain",
    )


class WebsocketTokenMiddleware:
    """ASGI middleware: refuses websocket handshakes without the token, as the cookie or as
    an `Authorization: Bearer` header (docs/security.md promises both, as for HTTP)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> Any:
        if scope["type"] == "websocket" and not _scope_has_token(scope):
            await send({"type": "websocket.close", "code": 4403})
            return None
        return await self.app(scope, receive, send)


def _scope_has_token(scope: dict) -> bool:
    if token_matches(_cookie_from_scope(scope)):
        return True
    return any(token_matches(bearer_token(v)) for v in _headers(scope, b"authorization"))


def _cookie_from_scope(scope: dict) -> str | None:
    hosts = _headers(scope, b"host")
    name = cookie_name(hosts[0] if len(hosts) == 1 else "")
    for value in _headers(scope, b"cookie"):
        cookie = SimpleCookie()
        try:
            cookie.load(value)
        except CookieError:
            continue
        if name in cookie:
            return cookie[name].value
    return None


class WebsocketOriginMiddleware:
    """ASGI middleware: closes, before it is accepted, a websocket whose Origin is not the
    origin of the page it claims to come from (see the module docstring)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> Any:
        if scope["type"] == "websocket" and not same_origin(scope):
            await send({"type": "websocket.close", "code": 4403})
            return None
        return await self.app(scope, receive, send)


def same_origin(scope: dict) -> bool:
    """Whether the handshake's Origin header is exactly this server's origin as the browser
    addressed it. A TLS proxy in front says so in X-Forwarded-Proto (a page cannot set it)."""
    origins, hosts = _headers(scope, b"origin"), _headers(scope, b"host")
    if len(origins) != 1 or len(hosts) != 1:
        return False
    domain, _ = split_domain_port(hosts[0])
    if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
        return False
    forwarded = _headers(scope, b"x-forwarded-proto")
    if forwarded:
        scheme = forwarded[0].split(",")[0].strip().lower()
    else:
        scheme = "https" if scope.get("scheme") == "wss" else "http"
    served = _origin_parts(f"{scheme}://{hosts[0]}")
    return served is not None and _origin_parts(origins[0]) == served


def _origin_parts(origin: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an http(s) origin, default port filled in; None for anything
    else (`null`, a path, a user name, a malformed port)."""
    try:
        url = urlsplit(origin.strip())
        port = url.port
    except ValueError:
        return None
    if url.scheme not in ("http", "https") or not url.hostname or url.username is not None:
        return None
    if url.path or url.query or url.fragment:
        return None
    return url.scheme, url.hostname, port or (443 if url.scheme == "https" else 80)


def _headers(scope: dict, wanted: bytes) -> list[str]:
    return [value.decode("latin-1") for name, value in scope.get("headers", []) if name == wanted]
