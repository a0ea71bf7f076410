"""Channel group names for any session id the socket's path lets through.

Channels takes only ASCII letters, digits, hyphens, underscores and periods, under 100
characters, in a group name; the path's `\\w` lets any letter through, so a session id
such as `ä` must still name a valid group, and the socket to it must close cleanly.
"""

from __future__ import annotations

import pytest
from channels.layers import get_channel_layer

from acdc.asgi import application
from chat.web.broadcast import session_group
from tests.chat.sockets import ORIGIN, Socket, next_frame

pytestmark = pytest.mark.django_db(transaction=True)


def test_every_session_id_names_a_valid_group_of_its_own():
    layer = get_channel_layer()
    ids = ["ä", "日本語" * 20, "sess_1_abc", "a.b-c_d", "x" * 60, "ä" * 60]
    names = [session_group(session_id) for session_id in ids]
    assert all(layer.require_valid_group_name(name) for name in names)
    assert len(set(names)) == len(ids)
    assert session_group("sess_1_abc") == "session.sess_1_abc"  # readable when it can be


async def test_a_socket_to_a_non_ascii_session_is_refused_and_closes_cleanly():
    ws = Socket(application, "/ws/session/ä/", ORIGIN)
    connected, _ = await ws.connect()
    assert connected
    assert "no session" in await next_frame(ws)
    assert (await ws.receive_output())["type"] == "websocket.close"
    await ws.disconnect()  # raises what `disconnect` raised
