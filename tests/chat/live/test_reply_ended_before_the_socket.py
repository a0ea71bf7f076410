"""A page drawn while a reply streamed, whose reply ended before its socket joined the
session's group: the finished frame went by, so the socket draws the conversation again
instead of leaving the reply "Streaming…" with Stop on (a reload at the end of a reply)."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from chat.web.broadcast import session_socket_url
from history import services
from tests.chat.sockets import ORIGIN, Socket, application, new_session, next_frame

pytestmark = pytest.mark.django_db(transaction=True)


@database_sync_to_async
def _finished_exchange(session) -> None:
    services.message_append(session=session, role="user", content="hello", turn_id="t1")
    services.message_append(
        session=session, role="assistant", content="ALL OF THE ANSWER", turn_id="t1"
    )


async def _open(path: str) -> Socket:
    socket = Socket(application, path, ORIGIN)
    connected, _ = await socket.connect()
    assert connected
    return socket


async def test_a_page_that_drew_a_reply_streaming_gets_the_ended_conversation():
    session = await new_session()
    await _finished_exchange(session)  # it ended between the page and the socket
    socket = await _open(session_socket_url(session.id, streaming=True))
    frame = await next_frame(socket)
    assert 'id="conversation"' in frame and "ALL OF THE ANSWER" in frame
    assert "Streaming" not in frame and 'id="stop-button"' in frame and "disabled>Stop" in frame
    await socket.disconnect()


async def test_a_page_that_drew_no_reply_streaming_is_not_redrawn():
    session = await new_session()
    await _finished_exchange(session)
    socket = await _open(session_socket_url(session.id))
    frames = []
    while not await socket.receive_nothing(timeout=1):
        frames.append(await socket.receive_from())
    assert not [f for f in frames if 'id="conversation"' in f]
    await socket.disconnect()
