"""Random frames through the real consumer (the ASGI app, one socket for every example).

Each example sends one random frame, then a sentinel frame with an unknown action; the frames
the socket answers up to the sentinel's refusal are that example's. A frame the protocol
refuses must be answered by exactly one error frame saying why; no frame may end the
consumer (an exception in it would surface on the next read). Frames the protocol accepts as
a message or a selection would start work of their own and are left to the other tests.
"""

from __future__ import annotations

import json
from html import escape

import pytest
from django.conf import settings
from hypothesis import HealthCheck, assume, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from chat.live.protocol import FrameError, parse_frame
from tests.chat.sockets import connect, frames_until, new_session

pytestmark = pytest.mark.django_db(transaction=True)

SENTINEL = "fuzz-sentinel"
_HUGE = st.integers(1_000_000, 1_000_010).map(lambda size: "x" * size)  # over the limit
_TEXT = (
    st.text(st.characters(codec=None, exclude_categories=()), max_size=30)
    | st.sampled_from(["\ud800", "ok \udfff", "a\0b", "", " ", "send", "/compact", "a" * 64])
    | _HUGE
)
_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=10,
)
_ACTION = st.sampled_from(["", "SEND", "\ud800", "stop ", "explode", "select"]) | _JSONISH
_FIELDS = ("message", "model", "path", "image", "focus", "confirm", "HEADERS")
_FRAME = st.fixed_dictionaries(
    {}, optional={"action": _ACTION, **dict.fromkeys(_FIELDS, _JSONISH), "extra": _JSONISH}
)
_WIRE = (
    st.one_of(_FRAME, _JSONISH).map(json.dumps).map(lambda text: {"text": text})
    | _TEXT.map(lambda text: {"text": text})  # raw text, lone surrogates unescaped
    | st.integers(4300, 5000).map(lambda digits: {"text": f'{{"model": {"9" * digits}}}'})
    | st.binary(max_size=20).map(lambda data: {"bytes": data})
)


def _refusal(wire: dict) -> str | None:
    """What the protocol says of the frame; None for a frame it accepts."""
    text, data = wire.get("text"), wire.get("bytes")
    try:
        frame = parse_frame(text, data, max_bytes=settings.ACDC_MAX_FRAME_BYTES)
    except FrameError as exc:
        return str(exc)
    assume(frame.action == "stop")  # with no turn running, stop is answered by nothing
    return None


@pytest.fixture
async def socket():
    session = await new_session()
    ws = await connect(session.id)
    yield ws
    await ws.disconnect()


@hypothesis_settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(wire=_WIRE)
async def test_every_bad_frame_gets_one_error_frame_and_the_socket_lives_on(socket, wire):
    refusal = _refusal(wire)
    await socket.send_input({"type": "websocket.receive", **wire})  # empty frames too
    await socket.send_to(text_data=json.dumps({"action": SENTINEL}))
    *answers, sentinel = await frames_until(socket, SENTINEL)
    assert "Unknown action" in sentinel
    if refusal is None:
        assert answers == []
    else:
        assert len(answers) == 1, answers
        assert 'role="alert"' in answers[0] and escape(refusal) in answers[0]
