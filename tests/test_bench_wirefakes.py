"""The wire fakes against hand-worked examples of each provider's documented cache rules.

Requests go over loopback HTTP as a client would send them; the expected figures are
worked out from the rules (which blocks are read, which written) with the fake's own
token count of each block, so what is checked is the rule, not the tokenizer.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from bench.wirefakes import AUTOMATIC_RULES, Clock, Reply, WireFake
from bench.wirefakes.anthropic import LOOKBACK
from bench.wirefakes.tokens import block_tokens

SONNET = "claude-sonnet-4-5"
SYSTEM_TEXT = "You review code carefully and answer briefly. " * 160  # ~1,400 tokens
MARK = {"type": "ephemeral"}


@pytest.fixture
def fake() -> Iterator[WireFake]:
    with WireFake(clock=Clock(start=1_000_000.0)) as server:
        yield server


def post(fake: WireFake, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        fake.base_url + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "x-api-key": "test"},
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def usage_of(fake: WireFake, body: dict[str, Any]) -> dict[str, Any]:
    status, answer = post(fake, "/v1/messages", body)
    assert status == 200, answer
    return answer["usage"]


def text(words: str, marked: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": words}
    return {**block, "cache_control": MARK} if marked else block


def tool(description: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    return {"name": "read_file", "description": description, "input_schema": schema}


def request(
    *,
    tools: list[dict] | None = None,
    system: list[dict] | None = None,
    messages: list[dict] | None = None,
    model: str = SONNET,
    **extra: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "max_tokens": 100, **extra}
    body["system"] = system if system is not None else [text(SYSTEM_TEXT, marked=True)]
    body["messages"] = messages or [{"role": "user", "content": "What does main() do?"}]
    if tools:
        body["tools"] = tools
    return body


def tokens(*blocks: dict[str, Any]) -> int:
    return sum(block_tokens(b) for b in blocks)


# -- Anthropic ------------------------------------------------------------------------------


def test_a_second_identical_request_reads_the_prefix_the_first_wrote(fake):
    first = usage_of(fake, request())
    second = usage_of(fake, request())
    system = tokens(text(SYSTEM_TEXT))
    question = tokens({"type": "text", "text": "What does main() do?"})
    assert first["cache_creation_input_tokens"] == system
    assert first["cache_read_input_tokens"] == 0
    assert first["input_tokens"] == question
    assert second["cache_read_input_tokens"] == system
    assert second["cache_creation_input_tokens"] == 0
    assert second["input_tokens"] == question
    assert first["cache_creation"]["ephemeral_5m_input_tokens"] == system


def test_a_change_in_tools_invalidates_the_system_prefix_after_them(fake):
    usage_of(fake, request(tools=[tool("Read a file.")]))
    same = usage_of(fake, request(tools=[tool("Read a file.")]))
    changed = usage_of(fake, request(tools=[tool("Read one file.")]))
    without = usage_of(fake, request())
    assert same["cache_read_input_tokens"] > 0
    assert changed["cache_read_input_tokens"] == 0
    assert changed["cache_creation_input_tokens"] == same["cache_read_input_tokens"] - tokens(
        tool("Read a file.")
    ) + tokens(tool("Read one file."))
    assert without["cache_read_input_tokens"] == 0  # a request without the tools reads nothing


def test_a_change_of_tool_choice_invalidates_message_blocks_but_not_the_system(fake):
    history = [
        {"role": "user", "content": [text("Explain the parser. " * 80, marked=True)]},
    ]
    tools = [tool("Read a file.")]
    usage_of(fake, request(tools=tools, messages=history, tool_choice={"type": "auto"}))
    again = usage_of(fake, request(tools=tools, messages=history, tool_choice={"type": "any"}))
    prefix = tokens(tools[0], text(SYSTEM_TEXT))
    assert again["cache_read_input_tokens"] == prefix
    assert again["cache_creation_input_tokens"] == tokens(history[0]["content"][0])


def test_adding_an_image_invalidates_message_blocks_but_not_the_system(fake):
    first = [{"role": "user", "content": [text("Explain the parser. " * 80, marked=True)]}]
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}}
    second = [*first, {"role": "user", "content": [image, text("And this?", marked=True)]}]
    usage_of(fake, request(messages=first))
    again = usage_of(fake, request(messages=second))
    assert again["cache_read_input_tokens"] == tokens(text(SYSTEM_TEXT))


def conversation(blocks: int) -> list[dict[str, Any]]:
    """One user message of `blocks` short text blocks, the last one marked."""
    content = [text(f"note {n}") for n in range(blocks)]
    content[-1] = {**content[-1], "cache_control": MARK}
    return [{"role": "user", "content": content}]


def test_a_breakpoint_reads_an_entry_up_to_twenty_blocks_back_and_no_further(fake):
    unmarked = [text(SYSTEM_TEXT)]
    usage_of(fake, request(system=unmarked, messages=conversation(5)))
    near = usage_of(fake, request(system=unmarked, messages=conversation(5 + LOOKBACK - 1)))
    assert LOOKBACK == 20
    assert near["cache_read_input_tokens"] == tokens(
        text(SYSTEM_TEXT), *conversation(5)[0]["content"]
    )
    fake.clock.advance(3600)  # a fresh cache for the far case
    usage_of(fake, request(system=unmarked, messages=conversation(5)))
    far = usage_of(fake, request(system=unmarked, messages=conversation(5 + LOOKBACK)))
    assert far["cache_read_input_tokens"] == 0


def test_a_prefix_below_the_models_minimum_is_not_cached(fake):
    short = [text("Be brief. " * 60, marked=True)]  # a few hundred tokens
    assert usage_of(fake, request(system=short))["cache_creation_input_tokens"] == 0
    assert usage_of(fake, request(system=short))["cache_read_input_tokens"] == 0
    middling = [text("Be brief. " * 400, marked=True)]  # ~1,600 tokens: over 1,024, under 2,048
    assert usage_of(fake, request(system=middling))["cache_creation_input_tokens"] > 0
    haiku = usage_of(fake, request(system=middling, model="claude-3-5-haiku-20241022"))
    assert haiku["cache_creation_input_tokens"] == 0


def test_an_entry_expires_five_minutes_after_its_last_use(fake):
    usage_of(fake, request())
    fake.clock.advance(301)
    assert usage_of(fake, request())["cache_read_input_tokens"] == 0


def test_a_read_renews_the_entry_for_another_five_minutes(fake):
    usage_of(fake, request())
    fake.clock.advance(240)
    assert usage_of(fake, request())["cache_read_input_tokens"] > 0
    fake.clock.advance(240)  # 480 s after the write, 240 s after the read
    assert usage_of(fake, request())["cache_read_input_tokens"] > 0


def test_a_one_hour_entry_outlives_five_minutes(fake):
    system = [{**text(SYSTEM_TEXT), "cache_control": {"type": "ephemeral", "ttl": "1h"}}]
    first = usage_of(fake, request(system=system))
    fake.clock.advance(1800)
    assert usage_of(fake, request(system=system))["cache_read_input_tokens"] > 0
    assert first["cache_creation"]["ephemeral_1h_input_tokens"] == tokens(text(SYSTEM_TEXT))


def test_more_than_four_breakpoints_are_refused_as_anthropic_does(fake):
    system = [text(f"part {n} " * 10, marked=True) for n in range(5)]
    status, answer = post(fake, "/v1/messages", request(system=system))
    assert status == 400
    assert answer["type"] == "error"
    assert answer["error"]["type"] == "invalid_request_error"
    assert "maximum of 4 blocks with cache_control" in answer["error"]["message"]
    assert fake.requests == []


def test_the_clock_moves_over_http_and_expires_entries(fake):
    usage_of(fake, request())
    status, answer = post(fake, "/_clock", {"advance": 400})
    assert status == 200 and answer["now"] == 1_000_400.0
    assert usage_of(fake, request())["cache_read_input_tokens"] == 0


def test_scripted_replies_are_answered_in_order_and_every_request_is_recorded(fake):
    fake.enqueue("first", Reply("second"))
    answers = [post(fake, "/v1/messages", request())[1] for _ in range(3)]
    assert [a["content"][0]["text"] for a in answers] == ["first", "second", "ok"]
    assert [r.api for r in fake.requests] == ["anthropic"] * 3
    assert fake.requests[1].usage["cache_read_input_tokens"] > 0


# -- OpenAI and the other automatic rules ------------------------------------------------


def chat_body(system: str, question: str = "What does main() do?", **extra: Any) -> dict:
    messages = [{"role": "system", "content": system}, {"role": "user", "content": question}]
    return {"model": "gpt-4.1", "messages": messages, **extra}


def openai_usage(fake: WireFake, body: dict[str, Any]) -> dict[str, Any]:
    status, answer = post(fake, "/v1/chat/completions", body)
    assert status == 200, answer
    return answer["usage"]


def test_openai_reads_a_repeated_prefix_in_128_token_steps_from_1024(fake):
    first = openai_usage(fake, chat_body(SYSTEM_TEXT))
    second = openai_usage(fake, chat_body(SYSTEM_TEXT, "And what does parse() do?"))
    assert first["prompt_tokens_details"]["cached_tokens"] == 0
    cached = second["prompt_tokens_details"]["cached_tokens"]
    assert cached >= 1024 and (cached - 1024) % 128 == 0
    assert cached <= first["prompt_tokens"]
    assert first["prompt_tokens"] - cached < 128 + 20  # all but the differing question


def test_openai_caches_nothing_below_1024_tokens(fake):
    body = chat_body("Be brief. " * 100)
    openai_usage(fake, body)
    assert openai_usage(fake, body)["prompt_tokens_details"]["cached_tokens"] == 0


def test_openai_tools_come_first_so_changing_them_invalidates_everything(fake):
    tools = [{"type": "function", "function": {"name": "read_file", "parameters": {}}}]
    openai_usage(fake, chat_body(SYSTEM_TEXT, tools=tools))
    other = [{"type": "function", "function": {"name": "open_file", "parameters": {}}}]
    usage = openai_usage(fake, chat_body(SYSTEM_TEXT, tools=other))
    assert usage["prompt_tokens_details"]["cached_tokens"] == 0


def test_openai_prefix_expires_unless_read(fake):
    openai_usage(fake, chat_body(SYSTEM_TEXT))
    fake.clock.advance(240)
    assert openai_usage(fake, chat_body(SYSTEM_TEXT))["prompt_tokens_details"]["cached_tokens"]
    fake.clock.advance(240)
    assert openai_usage(fake, chat_body(SYSTEM_TEXT))["prompt_tokens_details"]["cached_tokens"]
    fake.clock.advance(301)
    assert not openai_usage(fake, chat_body(SYSTEM_TEXT))["prompt_tokens_details"]["cached_tokens"]


def test_deepseek_style_rules_cache_from_64_tokens_in_64_token_units():
    with WireFake(clock=Clock(start=0.0), automatic=AUTOMATIC_RULES["deepseek"]) as fake:
        body = chat_body("Be brief. " * 40)
        openai_usage(fake, body)
        usage = openai_usage(fake, body)
    cached = usage["prompt_tokens_details"]["cached_tokens"]
    assert cached >= 64 and cached % 64 == 0
    assert usage["prompt_tokens"] - cached < 64
