from __future__ import annotations

import json

import pytest

from chat.web.protocol import FrameError, parse_frame

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


@pytest.mark.parametrize(
    ("message", "focus"),
    [("/compact", ""), ("  /compact  keep the parser notes ", "keep the parser notes")],
)
def test_slash_compact_is_a_compaction_not_a_message(message, focus):
    frame = parse_frame(json.dumps({"action": "send", "message": message}), None, max_bytes=10**6)
    assert (frame.action, frame.focus, frame.message) == ("compact", focus, "")


def test_a_message_that_only_starts_like_the_command_is_a_message():
    frame = parse_frame(json.dumps({"message": "/compactness of code"}), None, max_bytes=10**6)
    assert frame.action == "send" and frame.message == "/compactness of code"


def test_a_compaction_focus_must_be_text_and_is_capped():
    with pytest.raises(FrameError, match="focus must be text"):
        parse_frame(json.dumps({"action": "compact", "focus": 3}), None, max_bytes=10**6)
    frame = parse_frame(
        json.dumps({"action": "compact", "focus": "x" * 900}), None, max_bytes=10**6
    )
    assert len(frame.focus) == 500
