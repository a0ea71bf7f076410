from __future__ import annotations

import json

import pytest

from chat.protocol import FrameError, parse_frame

LIMIT = 1_000_000


def parse(text=None, data=None):
    return parse_frame(text, data, max_bytes=LIMIT)


def test_it_reads_an_htmx_ws_send_frame():
    raw = {"message": "hi", "action": "send", "HEADERS": {"HX-Request": "true"}}
    frame = parse(json.dumps(raw))
    assert (frame.action, frame.message) == ("send", "hi")


def test_send_is_the_default_action():
    assert parse(json.dumps({"message": "hi"})).action == "send"


@pytest.mark.parametrize(
    ("text", "data", "says"),
    [
        ("{not json", None, "not valid JSON"),
        ("[1, 2]", None, "JSON object"),
        (json.dumps({"action": "explode"}), None, "Unknown action"),
        (json.dumps({"message": ["a"]}), None, "must be text"),
        (None, b"\x00\x01", "Binary frames"),
        (None, None, "Empty frame"),
        ("[" * 100_000, None, "not valid JSON"),
    ],
)
def test_it_rejects_malformed_frames_with_a_reason(text, data, says):
    with pytest.raises(FrameError, match=says):
        parse(text, data)


def test_it_rejects_frames_over_the_size_limit():
    with pytest.raises(FrameError, match="too large"):
        parse(json.dumps({"message": "x" * (LIMIT + 1)}))
