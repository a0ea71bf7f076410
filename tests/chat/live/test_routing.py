"""Websocket paths other than a session's are refused quietly, without a traceback."""

from __future__ import annotations

import pytest

from acdc.asgi import application
from tests.chat.sockets import ORIGIN, Socket, next_frame

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("path", ["/ws/", "/ws/nope/", "/ws/session/", "/ws/session/a/b/", "/nope"])
async def test_an_unknown_websocket_path_is_refused_at_the_handshake(path):
    ws = Socket(application, path, ORIGIN)
    connected, _ = await ws.connect()
    assert not connected
    await ws.wait()


async def test_a_dot_dot_session_is_an_unknown_session_not_a_traceback():
    # Daphne makes "/ws/session/../" "/ws/" (refused above); the test client keeps it.
    ws = Socket(application, "/ws/session/../", ORIGIN)
    connected, _ = await ws.connect()
    assert connected
    assert "There is no session &#x27;..&#x27;." in await next_frame(ws)
    assert (await ws.receive_output())["type"] == "websocket.close"
