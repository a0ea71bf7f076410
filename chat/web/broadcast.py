"""What a page tells the open tabs, and where a page's tab listens: the pages' side of the socket.

A view that changes a session (a version shown, an edit accepted, a checkpoint, another
model) reaches every tab through the channel layer: a frame to the session's group or to
the repository's (`to_session`, `to_repository`), or a nudge that makes each worker's
follower look at the session (`announce`). The live socket (`chat.live`) joins the same
groups under the same names and listens on the path `session_socket_url` gives a page.
This module owns those names, so the pages never import the socket; it imports nothing of
`chat.live`, and it sends only from synchronous code (a view).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from urllib.parse import urlencode

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.http import HttpRequest, HttpResponse

# The websocket of one session page; `session_socket_url` builds the path it matches.
SESSION_SOCKET = r"^ws/session/(?P<session_id>[\w.-]{1,60})/$"
DRAWN = "drawn"  # in the socket's query: STREAMING when the page drew a reply streaming
STREAMING = "streaming"
SEEN = "seen"  # in the socket's query: the session's version the page drew
_GROUP_SAFE = re.compile(r"[A-Za-z0-9_.-]{1,80}")  # what a channel group name may hold


# The act a tab's request says it carries (static/acdc/acts.js): "tab:number".
ACT_HEADER = "X-Acdc-Act"
_ACT = re.compile(r"[a-z0-9]{1,16}:\d{1,15}")


class ActMiddleware:
    """Reads the act a request carries (`request.act`, "" for none), so each frame its view
    sends says which act drew it (`to_session(..., act=request.act)`): the tab that made a
    later act leaves it out instead of drawing an older state over the person's change. A
    header of any other shape is no act."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        value = request.headers.get(ACT_HEADER, "")
        request.act = value if _ACT.fullmatch(value) else ""
        return self.get_response(request)


def _marked(html: str, act: str) -> str:
    return f"<!--acdc-act {act}-->{html}" if act else html


def session_group(session_id: str) -> str:
    """The channel group of every tab showing the session, on any worker. Channels takes
    only ASCII letters, digits, `-`, `_` and `.` under 100 characters, while the socket's
    path lets any letter through (`ä`): such an id is named by its hash instead, under a
    prefix no readable name has, so two ids never share a group."""
    if _GROUP_SAFE.fullmatch(session_id):
        return f"session.{session_id}"
    return "session-h." + hashlib.sha256(session_id.encode()).hexdigest()[:40]


def files_group(repo) -> str:
    """The channel group of every tab showing a session of this repository."""
    return "files." + hashlib.sha1(str(repo).encode()).hexdigest()[:20]


def to_session(session_id: str, html: str, *, act: str = "") -> None:
    """Every tab of the session draws `html` (a frame of out-of-band fragments), marked
    with the `act` that drew it (the request's, when a view sends it)."""
    _send(session_group(session_id), {"type": "chat.frame", "html": _marked(html, act)})


def to_repository(repo, html: str, *, act: str = "") -> None:
    """Every tab on the repository takes `html` (a Files panel update)."""
    _send(files_group(repo), {"type": "chat.frame", "html": _marked(html, act)})


def announce(session_id: str) -> None:
    """Every worker with a tab of the session looks at it now and draws what changed."""
    _send(session_group(session_id), {"type": "panels.check"})


def check_due(session_id: str) -> None:
    """Accept all wrote a reply's edits and the session has a check: a turn host takes it."""
    _send(session_group(session_id), {"type": "check.due"})


def _send(group: str, message: dict) -> None:
    async_to_sync(get_channel_layer().group_send)(group, message)


def session_socket_url(session_id: str, *, streaming: bool = False, seen: str = "") -> str:
    """The path a session page connects its websocket to (matches SESSION_SOCKET); a page
    drawn with a reply streaming says so, so that a reply which ends before the socket joins
    is drawn again instead of staying "Streaming…"; `seen` is the session's version the page
    drew (chat.web.panels), so that a change made meanwhile reaches it too."""
    fields = {DRAWN: STREAMING} if streaming else {}
    if seen:
        fields[SEEN] = seen
    return f"/ws/session/{session_id}/" + (f"?{urlencode(fields)}" if fields else "")
