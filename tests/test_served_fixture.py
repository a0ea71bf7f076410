"""The `served` fixture (tests/conftest.py) ends on its test's event loop, before it closes.

A Files panel counting pass (chat.repo.passes) is a thread of the served object, and sends
its frames on the loop of the socket that started it (`chat.live.consumers._sender`). It
may still run when its test ends. When the fixture waited for it only after the loop had
closed, a frame sent while the loop was being closed became a `group_send` task started
after the loop's cancelling sweep; left suspended when the loop closed, its coroutine
raised "Event loop is closed" when a later test collected it (the suite's "Exception
ignored in <coroutine object ...ChannelLayer.group_send>"). Here the pass sends exactly
then, through a layer whose delivery never ends (a Redis that stopped answering), so the
send is still suspended when the loop closes unless the pass was waited for before.
"""

from __future__ import annotations

import asyncio
import gc
import threading

import pytest
from channels.layers import InMemoryChannelLayer

from chat.live.consumers import _sender

WAIT = 30.0


class StalledChannelLayer(InMemoryChannelLayer):
    """Delivers nothing: each send waits for good."""

    async def send(self, channel: str, message: dict) -> None:
        await asyncio.Event().wait()


@pytest.fixture
def collected_after_the_loop():
    """Torn down after the test's event loop closed: what it left behind is collected
    there, and a coroutine that cannot close fails the test (the suite's filterwarnings)."""
    yield
    gc.collect()


@pytest.fixture
def last_frame_due():
    """Set when the test's teardown begins: the pass may send its last frame."""
    due = threading.Event()
    yield due
    due.set()


async def test_a_pass_sending_as_its_loop_ends_leaves_no_send_suspended(
    collected_after_the_loop, served, last_frame_due, root
):
    layer = StalledChannelLayer()
    await layer.group_add("files", await layer.new_channel())
    send = _sender(layer, "files", set())
    sent = threading.Event()

    def count() -> None:
        last_frame_due.wait(WAIT)
        send("<p>counted</p>")
        sent.set()

    assert served.passes.start("counts", root, count)
    asyncio.ensure_future(_last_frame_when_cancelled(last_frame_due, sent))


async def _last_frame_when_cancelled(due: threading.Event, sent: threading.Event) -> None:
    """Left running for the loop's end: when its closing cancels it, the pass's last frame
    is sent (unless the teardown let it go before)."""
    try:
        await asyncio.Event().wait()
    finally:
        due.set()
        await asyncio.to_thread(sent.wait, WAIT)
