"""The offline models acdc/fake and acdc/dry-run, through litellm's real streaming path."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from chat.llm.client import LiteLLMClient
from chat.llm.fake import FakeScript, FakeStep
from chat.llm.sdk import acdc_provider
from contextcore.llm import LLMRequest, TextDelta, UsageReport
from contextcore.tokens import TokenCounter

LOOPBACK = ("127.0.0.1", "::1", "localhost")
CACHED = {"type": "ephemeral"}


@pytest.fixture
def client() -> LiteLLMClient:
    return LiteLLMClient(max_retries=0)


def cached_text(text: str) -> list[dict[str, object]]:
    return [{"type": "text", "text": text, "cache_control": CACHED}]


MESSAGES = [
    {"role": "system", "content": cached_text("You help with this repository. " * 40)},
    {"role": "user", "content": cached_text("Here is src/app.py:\n" + "def f(): pass\n" * 30)},
    {"role": "assistant", "content": "Noted."},
    {"role": "user", "content": "What does f do?"},
]


async def reply(client: LiteLLMClient, req: LLMRequest) -> tuple[str, list[object]]:
    events = [event async for event in client.stream(req)]
    return "".join(e.text for e in events if isinstance(e, TextDelta)), events


def ask(text: str, model: str = "acdc/fake", **kwargs: object) -> LLMRequest:
    return LLMRequest(model=model, messages=[{"role": "user", "content": text}], **kwargs)


async def test_the_fake_echoes_the_last_user_message_in_small_chunks(client, fake):
    text, events = await reply(client, ask("x" * 300))
    assert text == "Fake reply to: " + "x" * 200
    assert sum(isinstance(e, TextDelta) for e in events) > 5


async def test_the_fake_replies_with_enqueued_steps_in_order(client, fake):
    fake.enqueue("first", {"text": "second"}, FakeStep(text="third"))
    answers = [(await reply(client, ask("q")))[0] for _ in range(4)]
    assert answers == ["first", "second", "third", "Fake reply to: q"]


async def test_the_fake_records_every_request_it_receives(client, fake):
    tools = [{"type": "function", "function": {"name": "activate", "parameters": {}}}]
    req = LLMRequest("acdc/fake", MESSAGES, tools=tools, max_tokens=99, metadata={"acdc": {"a": 1}})
    await reply(client, req)
    received = fake.requests[-1]
    assert received.model == "acdc/fake"
    assert received.messages == MESSAGES
    assert received.tools == tools
    assert received.kwargs["max_tokens"] == 99
    assert received.metadata == {"acdc": {"a": 1}}


async def test_the_fake_reports_prompt_and_completion_tokens_it_counted(client, fake):
    fake.enqueue("four words of reply")
    _, events = await reply(client, ask("count me"))
    usage = next(e.usage for e in events if isinstance(e, UsageReport))
    counter = TokenCounter("cl100k_base")
    assert usage.prompt_tokens == counter.count([{"role": "user", "content": "count me"}])
    assert usage.completion_tokens == counter.count_text("four words of reply")


def test_a_step_with_an_unknown_field_or_error_kind_is_refused():
    with pytest.raises(ValueError, match="unknown fake step fields"):
        FakeStep.parse({"txt": "typo"})
    with pytest.raises(ValueError, match="unknown fake error kind"):
        FakeStep(error="meltdown")


@pytest.fixture
def script_file(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "fake.json"
    env = {"ACDC_FAKE_SCRIPT": str(path), "ACDC_FAKE_CHUNK_DELAY": "0.001"}
    script = FakeScript.from_env(env)
    assert script.default_chunk_delay == 0.001
    previous = acdc_provider().install(script)
    yield path
    acdc_provider().install(previous)


async def test_the_fake_follows_a_script_file_from_another_process(client, script_file):
    script_file.write_text(json.dumps(["one", {"text": "two", "chunk_size": 1}]))
    answers = [(await reply(client, ask("q")))[0] for _ in range(3)]
    assert answers == ["one", "two", "Fake reply to: q"]


async def test_the_fake_starts_over_when_the_script_file_changes(client, script_file):
    script_file.write_text(json.dumps(["old"]))
    assert (await reply(client, ask("q")))[0] == "old"
    script_file.write_text(json.dumps(["new reply", "and more"]))
    stat = script_file.stat()
    os.utime(script_file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert (await reply(client, ask("q")))[0] == "new reply"
    assert (await reply(client, ask("q")))[0] == "and more"


async def test_a_script_file_can_raise_provider_errors(script_file):
    from contextcore.llm import RateLimitError

    script_file.write_text(json.dumps([{"error": "rate_limit", "retry_after": 2}]))
    with pytest.raises(RateLimitError) as caught:
        await reply(LiteLLMClient(max_retries=0), ask("q"))
    assert caught.value.retry_after == 2


async def test_the_dry_run_reports_messages_breakpoints_and_totals(client):
    text, events = await reply(client, LLMRequest("acdc/dry-run", MESSAGES))
    counter = TokenCounter("cl100k_base")
    assert "## Dry run: nothing was sent to a model" in text
    assert "- Messages: 4" in text
    assert f"- Total prompt tokens: {counter.count(MESSAGES):,}" in text
    assert f"| 0 | system | {counter.count(MESSAGES[0]):,} | yes |" in text
    assert "| 3 | user | " in text
    assert f"| 2 | 1 | {counter.count(MESSAGES[:2]):,} |" in text
    assert any(isinstance(e, UsageReport) for e in events)


async def test_the_dry_run_prices_the_request_at_the_session_models_prices(client):
    counter = TokenCounter("cl100k_base")
    total, cached = counter.count(MESSAGES), counter.count(MESSAGES[:2])
    metadata = {"acdc": {"price_model": "anthropic/claude-haiku-4-5"}}
    text, _ = await reply(client, LLMRequest("acdc/dry-run", MESSAGES, metadata=metadata))
    assert "Prices from: `anthropic/claude-haiku-4-5`" in text
    assert f"| no cache hits | ${total * 1e-06:.4f} |" in text
    warm = cached * 1e-07 + (total - cached) * 1e-06
    assert f"| all cached prefixes read ({cached:,} tokens) | ${warm:.4f} |" in text


async def test_the_dry_run_renders_the_breakdown_it_is_given(client):
    breakdown = {"sections": {"system": 120, "files": 3400}, "tiers": {"L0": 120, "active": 3400}}
    metadata = {"acdc": {"breakdown": breakdown, "prices": {"input": 1e-06}}}
    text, _ = await reply(client, LLMRequest("acdc/dry-run", MESSAGES, metadata=metadata))
    assert "### Breakdown" in text
    assert "| sections / files | 3,400 |" in text
    assert "| tiers / L0 | 120 |" in text
    assert "Prices from: `prices given in the request`" in text


async def test_the_dry_run_says_when_nothing_can_be_cached(client):
    text, _ = await reply(client, ask("plain", model="acdc/dry-run"))
    assert "None: nothing in this request can be cached." in text


async def test_a_broken_script_file_fails_the_request_without_retrying(script_file):
    from contextcore.llm import BadRequestError

    script_file.write_text("{not json")
    with pytest.raises(BadRequestError) as caught:
        await reply(LiteLLMClient(), ask("q"))
    assert "acdc/fake script" in caught.value.user_message


def test_steps_tagged_with_a_purpose_answer_only_requests_made_for_it(tmp_path):
    from chat.llm.fake import FakeScript, FakeStep

    script = FakeScript()
    script.enqueue(FakeStep(text="summary", purpose="history_summary"), "chat answer")
    assert script.next_step([], None).text == "chat answer"
    assert script.next_step([], "topic_detection").text.startswith("Fake reply")  # echo
    assert script.next_step([], "history_summary").text == "summary"

    file = tmp_path / "script.json"
    file.write_text('[{"text": "detector", "purpose": "topic_detection"}, "first", "second"]')
    from_file = FakeScript(script_file=file)
    assert from_file.next_step([], None).text == "first"
    assert from_file.next_step([], "topic_detection").text == "detector"
    assert from_file.next_step([], "topic_detection").text == "second"  # untagged fallback
