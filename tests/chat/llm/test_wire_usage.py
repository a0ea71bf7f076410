"""The app's LLM client through litellm against the wire fakes: cache usage as acdc sees it.

`LiteLLMClient` (the real one, litellm's real Anthropic and OpenAI paths, real HTTP) is
pointed at `bench.wirefakes.WireFake`; what the client reports as cache reads and
writes must be what the fake billed in the provider's own usage fields
(`cache_read_input_tokens` / `cache_creation_input_tokens`; `cached_tokens`).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench.wirefakes import Clock, WireFake
from chat.llm.client import LiteLLMClient
from contextcore.llm import LLMRequest, StreamEnd, TextDelta, UsageReport

pytestmark = pytest.mark.filterwarnings("ignore:Accessing the 'model_:DeprecationWarning")

SYSTEM = "You review code carefully and answer briefly. " * 160
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file of the repository.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
]


@pytest.fixture
def wire(monkeypatch: pytest.MonkeyPatch) -> Iterator[WireFake]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-loopback-test")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-test")
    with WireFake(clock=Clock(start=1_000_000.0)) as fake:
        yield fake


def chat_request(model: str, question: str) -> LLMRequest:
    system = {"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}
    messages = [
        {"role": "system", "content": [system]},
        {"role": "user", "content": question},
    ]
    return LLMRequest(model=model, messages=messages, tools=TOOLS)


async def turn(client: LiteLLMClient, request: LLMRequest) -> tuple[str, UsageReport, StreamEnd]:
    events = [event async for event in client.stream(request)]
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    usage = next(e for e in events if isinstance(e, UsageReport))
    return text, usage, events[-1]


async def test_anthropic_cache_writes_and_reads_reach_acdc_as_the_fake_billed_them(wire):
    wire.enqueue("The parser reads tokens.", "It returns a tree.")
    client = LiteLLMClient(api_base=wire.base_url)
    model = "anthropic/claude-sonnet-4-5"
    first, written, end = await turn(client, chat_request(model, "What does the parser do?"))
    second, read, _ = await turn(client, chat_request(model, "And what does it return?"))
    billed = [r.usage for r in wire.requests]
    assert (first, second) == ("The parser reads tokens.", "It returns a tree.")
    assert end == StreamEnd("stop")
    assert wire.requests[0].body["stream"] is True
    assert written.usage.cache_write_tokens == billed[0]["cache_creation_input_tokens"] > 1024
    assert written.usage.cache_read_tokens == 0
    assert read.usage.cache_read_tokens == billed[1]["cache_read_input_tokens"] > 1024
    assert read.usage.cache_write_tokens == billed[1]["cache_creation_input_tokens"] == 0
    whole = billed[1]["input_tokens"] + billed[1]["cache_read_input_tokens"]
    assert read.usage.prompt_tokens == whole
    assert read.usage.completion_tokens == billed[1]["output_tokens"]


async def test_openai_cached_tokens_reach_acdc_as_the_fake_billed_them(wire):
    client = LiteLLMClient(api_base=wire.base_url + "/v1")
    model = "openai/gpt-4.1"
    await turn(client, chat_request(model, "What does the parser do?"))
    _, read, _ = await turn(client, chat_request(model, "And what does it return?"))
    billed = wire.requests[1].usage
    assert wire.requests[1].body["stream_options"] == {"include_usage": True}
    assert read.usage.cache_read_tokens == billed["prompt_tokens_details"]["cached_tokens"] >= 1024
    assert read.usage.prompt_tokens == billed["prompt_tokens"]
