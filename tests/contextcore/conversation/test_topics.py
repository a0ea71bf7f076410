from __future__ import annotations

import asyncio
import json

from contextcore.conversation.topics import (
    SAFE_BOUNDARY,
    SidePrefix,
    TopicBoundary,
    TopicDetector,
    format_messages,
    parse_boundary,
    side_request,
)
from contextcore.llm import LLMError, StreamEnd, TextDelta, ToolCallDelta

HANG = object()


class ScriptedClient:
    """The LLM edge: replies in order, each streamed in small text chunks; an exception in
    the script is raised, `HANG` never answers."""

    def __init__(self, *replies):
        self.replies, self.requests = list(replies), []

    async def stream(self, request):
        self.requests.append(request)
        reply = self.replies.pop(0)
        if reply is HANG:
            await asyncio.sleep(10)
        if isinstance(reply, BaseException):
            raise reply
        for start in range(0, len(reply), 7):
            yield TextDelta(reply[start : start + 7])
        yield StreamEnd("stop")


def conversation(exchanges: int) -> list[dict]:
    messages = []
    for n in range(exchanges):
        messages += [
            {"role": "user", "content": f"question {n}"},
            {"role": "assistant", "content": f"answer {n}"},
        ]
    return messages


def answer(index, confidence=0.9, reason="switch to the parser", summary="tests were fixed"):
    return json.dumps(
        {
            "boundary_index": index,
            "boundary_reason": reason,
            "confidence": confidence,
            "summary": summary,
        }
    )


async def test_empty_messages_return_the_safe_boundary_without_asking_the_model(counter):
    client = ScriptedClient()
    assert await TopicDetector(client, "small", counter).detect([]) == SAFE_BOUNDARY
    assert client.requests == []


async def test_no_model_returns_the_safe_boundary(counter):
    client = ScriptedClient(answer(2))
    assert await TopicDetector(client, "", counter).detect(conversation(3)) == SAFE_BOUNDARY
    assert client.requests == []


async def test_a_successful_detection_returns_the_boundary_index_and_confidence(counter):
    client = ScriptedClient(answer(4, 0.8))
    boundary = await TopicDetector(client, "small", counter).detect(conversation(3))
    assert boundary == TopicBoundary(4, "switch to the parser", 0.8, "tests were fixed")
    request = client.requests[0]
    assert request.model == "small" and request.max_tokens
    assert "JSON" in request.messages[0]["content"]
    assert request.messages[1]["content"].startswith("[0] USER: question 0")


async def test_a_model_error_returns_the_safe_boundary(counter):
    client = ScriptedClient(LLMError("provider down"))
    assert await TopicDetector(client, "small", counter).detect(conversation(3)) == SAFE_BOUNDARY


async def test_a_model_that_times_out_returns_the_safe_boundary(counter):
    detector = TopicDetector(ScriptedClient(HANG), "small", counter, timeout=0.05)
    assert await detector.detect(conversation(3)) == SAFE_BOUNDARY


async def test_garbage_output_returns_the_safe_boundary(counter):
    client = ScriptedClient("I think the topic changed somewhere around the middle.")
    assert await TopicDetector(client, "small", counter).detect(conversation(3)) == SAFE_BOUNDARY


def test_messages_are_formatted_as_indexed_role_blocks():
    text = format_messages(conversation(2))
    assert text == (
        "[0] USER: question 0\n\n[1] ASSISTANT: answer 0\n\n"
        "[2] USER: question 1\n\n[3] ASSISTANT: answer 1"
    )


def test_long_messages_are_truncated_at_max_chars():
    text = format_messages([{"role": "user", "content": "x" * 1500}], max_chars=1000)
    assert text == "[0] USER: " + "x" * 1000 + "..."


def test_text_blocks_of_multimodal_messages_are_formatted_and_images_left_out():
    content = [{"type": "text", "text": "see this"}, {"type": "image_url", "image_url": {}}]
    assert format_messages([{"role": "user", "content": content}]) == "[0] USER: see this"


async def test_only_the_50_most_recent_messages_are_shown_numbered_by_their_full_index(counter):
    messages = conversation(40)
    client = ScriptedClient(answer(75))
    boundary = await TopicDetector(client, "small", counter).detect(messages)
    blocks = client.requests[0].messages[1]["content"]
    assert blocks.startswith("[30] USER: question 15") and "[29]" not in blocks
    assert blocks.count("\n\n[") == 49
    assert boundary.boundary_index == 75


async def test_a_boundary_before_the_shown_messages_is_rejected(counter):
    client = ScriptedClient(answer(3))
    boundary = await TopicDetector(client, "small", counter).detect(conversation(40))
    assert boundary.boundary_index is None


def test_clean_json_is_parsed():
    assert parse_boundary(answer(2, 0.7), count=4) == TopicBoundary(
        2, "switch to the parser", 0.7, "tests were fixed"
    )


def test_a_null_boundary_is_parsed_as_none():
    boundary = parse_boundary(answer(None, 0.2, reason=""), count=4)
    assert boundary.boundary_index is None and boundary.confidence == 0.2


def test_markdown_fenced_json_is_parsed():
    text = "Here you go:\n```json\n" + answer(3, 0.6) + "\n```\nHope it helps."
    assert parse_boundary(text, count=4).boundary_index == 3


def test_json_amid_prose_is_parsed():
    assert parse_boundary("Result: " + answer(1) + " -- done", count=4).boundary_index == 1


def test_truncated_json_falls_back_to_the_fields_a_regex_finds():
    text = '{"boundary_index": 3, "boundary_reason": "new \\"task\\"", "confidence": 0.75, "summ'
    assert parse_boundary(text, count=4) == TopicBoundary(3, 'new "task"', 0.75, "")


def test_completely_invalid_output_returns_null_and_zero_confidence():
    for text in ("", "no json here", "{not json", "[1, 2, 3]", '{"other": 1}'):
        boundary = parse_boundary(text, count=4)
        assert boundary.boundary_index is None and boundary.confidence == 0.0


def test_an_out_of_range_boundary_index_becomes_none():
    assert parse_boundary(answer(4), count=4).boundary_index is None
    assert parse_boundary(answer(-1), count=4).boundary_index is None
    assert parse_boundary(answer(True), count=4).boundary_index is None
    assert parse_boundary(answer("2"), count=4).boundary_index is None


def test_a_confidence_that_is_a_word_is_zero():
    assert parse_boundary(answer(2, "high"), count=4).confidence == 0.0
    assert parse_boundary(answer(2, None), count=4).confidence == 0.0
    assert parse_boundary(answer(2, True), count=4).confidence == 0.0


def test_an_out_of_range_confidence_is_clamped_to_zero_and_one():
    assert parse_boundary(answer(2, 7), count=4).confidence == 1.0
    assert parse_boundary(answer(2, -3), count=4).confidence == 0.0
    assert parse_boundary(answer(2, "0.8"), count=4).confidence == 0.8


def test_fields_of_the_wrong_type_become_empty_strings():
    boundary = parse_boundary(answer(2, 0.9, reason=5, summary=["a"]), count=4)
    assert boundary.boundary_reason == "" and boundary.summary == ""


def test_a_side_request_reuses_the_chats_prefix_only_where_that_costs_less(counter):
    prefix = ({"role": "system", "content": "chat system " * 500},)
    long_talk = format_messages([{"role": "user", "content": "lexer " * 100}] * 8)
    short_talk = format_messages([{"role": "user", "content": "lexer " * 40}])
    index = "[0] USER: lexer lexer"

    def build(read_price: float, transcript: str) -> list:
        return side_request(
            SidePrefix(prefix, read_price),
            "instruction",
            index=index,
            transcript=transcript,
            counter=counter,
            model="m",
        ).messages

    reused = build(0.1, long_talk)
    assert reused[0] == prefix[0] and index in reused[-1]["content"]
    # Reads at full price, or a transcript smaller than a tenth of the prefix: send it fresh.
    for fresh in (build(1.0, long_talk), build(0.1, short_talk)):
        assert fresh[0] == {"role": "system", "content": "instruction"}


class ToolCallingClient:
    """A model that calls one of the chat's tools before it answers."""

    async def stream(self, request):
        yield ToolCallDelta(index=0, id="call_1", name="read_file", arguments='{"path": "a"}')
        yield TextDelta(answer(2, 0.9))
        yield StreamEnd("tool_calls")


async def test_a_tool_call_in_a_side_answer_is_ignored_and_logged(caplog):
    detector = TopicDetector(ToolCallingClient(), "small-model")
    with caplog.at_level("WARNING", logger="contextcore.conversation.topics"):
        boundary = await detector.detect(conversation(3))
    assert boundary.boundary_index == 2  # the answer's text still counts
    assert "topic_detection asked for tool 'read_file'; ignored" in caplog.text
