"""Redis killed under a streaming reply, for real (a redis-server the test starts on a free
port and kills with SIGKILL): the tab is told in one line and its socket closes so the
page reconnects; the turn goes on writing to the database and ends complete; once Redis
is started again, the next turn works."""

from __future__ import annotations

import logging
import signal
import socket
import subprocess

import pytest
from channels.layers import get_channel_layer
from django.test import AsyncClient, override_settings

from acdc.asgi import application
from acdc.env import channel_layers
from chat.llm.fake import FakeStep
from chat.web.broadcast import session_group
from tests.chat.sockets import (
    ORIGIN,
    Socket,
    connect,
    eventually,
    frames_until,
    new_session,
    send,
    stored,
)

pytestmark = pytest.mark.django_db(transaction=True)
LONG = " ".join(f"word{n}" for n in range(300))


class Redis:
    def __init__(self) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        command = ["redis-server", "--port", str(self.port), "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen([*command, "--bind", "127.0.0.1"], stdout=subprocess.PIPE)
        for line in self.process.stdout:  # until it says it takes connections
            if b"Ready to accept connections" in line:
                break

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self.process.stdout.close()


@pytest.fixture
def redis(monkeypatch):
    server = Redis()
    server.start()
    layers = channel_layers(f"redis://127.0.0.1:{server.port}/0")  # as acdc serve sets it
    with override_settings(CHANNEL_LAYERS=layers):
        yield server
    server.kill()


async def through_the_layer(session_id: str):
    """A new socket, as the page opens once Redis is back: its first try must join the
    group and get a frame sent through the layer (no pooled connection Redis closed when it
    was killed may fail it, nor the test's own group send)."""
    ws = await connect(session_id)
    await ws.send_to(text_data="not json")  # answered once connect has joined the group
    seen = [(await ws.receive_output())["text"]]
    if "not valid JSON" not in seen[0]:  # the last turn's HUD may reach the new tab first
        seen.append((await ws.receive_output())["text"])
    assert "not valid JSON" in seen[-1], seen
    frame = {"type": "chat.frame", "html": "<p>through the layer</p>"}
    await get_channel_layer().group_send(session_group(session_id), frame)
    assert "through the layer" in (await ws.receive_output())["text"]
    return ws


async def test_redis_killed_mid_stream_the_tab_is_told_and_the_turn_ends_complete(
    redis, fake, caplog, served
):
    caplog.set_level(logging.INFO)
    fake.enqueue(FakeStep(text=LONG, chunk_delay=0.01, chunk_size=8), FakeStep(text="Back."))
    session = await new_session()
    ws = await connect(session.id)
    await send(ws, message="Write a lot.")
    await frames_until(ws, "word0")
    redis.kill()
    await frames_until(ws, "(Redis) is unreachable")
    assert (await ws.receive_output())["code"] == 1013
    assert served.tabs.of(session.id) == {}  # the turn streams to no dead socket
    # The page's tries while Redis stays down are refused before the socket opens: no line
    # a try in the conversation, and htmx waits longer before each.
    retry = Socket(application, f"/ws/session/{session.id}/", ORIGIN)
    assert (await retry.connect())[0] is False
    ended = ("complete", "error", "interrupted")
    rows = await eventually(
        lambda: stored(session),
        lambda rows: (rows[-1].role, rows[-1].status in ended) == ("assistant", True),
    )
    assert rows[-1].status == "complete" and rows[-1].content.endswith("word299")
    redis.start()
    ws = await through_the_layer(session.id)
    await send(ws, message="And now?")
    await frames_until(ws, 'data-status="complete"')
    assert (await stored(session))[-1].content == "Back."
    assert [r.getMessage() for r in caplog.records if r.exc_info] == []
    await ws.disconnect()


async def test_the_live_probe_tells_a_page_whether_redis_answers(redis):
    """What a page asks when its socket is refused: 503 with the one line while Redis is
    down, 204 once it is back (a fresh page while Redis is down says why, not just that
    the connection was lost)."""
    client = AsyncClient()
    assert (await client.get("/live/")).status_code == 204
    redis.kill()
    down = await client.get("/live/")
    assert down.status_code == 503
    line = down.content.decode()
    assert line.startswith("The live channel (Redis) is unreachable (")
    assert "REDIS_URL" in line and line.endswith("the page reconnects when it is back.")
    redis.start()
    assert (await client.get("/live/")).status_code == 204
