"""The Content-Security-Policy every response carries: scripts only from acdc's own files.

Model output is sanitized before it becomes HTML; this is the second wall: if markup ever
slipped through, the browser still runs no inline script, no event-handler attribute and no
script from elsewhere, and sends the page's data nowhere but back to this server ('self'
covers its own ws:// and wss:// too). So templates hold no `<script>` without `src` and no
`on*=` attribute; JavaScript lives in static/ and listens for events.

Styles stay open to inline use: templates size the budget bar with `style` attributes and
htmx adds its indicator rules as a `<style>` element. A style cannot run code.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

HEADER = "Content-Security-Policy"
POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "connect-src 'self'",
        "object-src 'none'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "form-action 'self'",
    ]
)


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault(HEADER, POLICY)
        return response
