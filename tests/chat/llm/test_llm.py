"""LiteLLMClient through litellm's real streaming path, driven by the scripted acdc/fake model."""

from __future__ import annotations

import asyncio
import json
import socket

import httpx
import pytest

from chat.llm.client import LiteLLMClient
from chat.llm.errors import map_error, retry_after_seconds, retry_reason
from chat.llm.facts import default_model, model_facts
from chat.llm.fake import ERROR_KINDS, FakeStep
from chat.llm.offline import provider_error
from chat.llm.sdk import litellm as litellm_module
from chat.llm.sdk import model_info
from chat.llm.usage import normalize_usage
from contextcore import llm as core
from contextcore.llm import (
    LLMRequest,
    Retrying,
    StreamEnd,
    TextDelta,
    ToolCallDelta,
    Usage,
    UsageReport,
)
from contextcore.prompt.cacherules import rules_for

CACHED = {"type": "ephemeral"}


class Sleeps(list[float]):
    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def client(sleeps: Sleeps) -> LiteLLMClient:
    return LiteLLMClient(sleep=sleeps)


def request(text: str = "Hello", model: str = "acdc/fake", **kwargs: object) -> LLMRequest:
    return LLMRequest(model=model, messages=[{"role": "user", "content": text}], **kwargs)


async def collect(client: LiteLLMClient, req: LLMRequest) -> list[object]:
    return [event async for event in client.stream(req)]


def text_of(events: list[object]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_it_streams_text_then_usage_then_the_end(client, fake):
    fake.enqueue(FakeStep(text="Hello there, world", chunk_size=5))
    events = await collect(client, request())
    assert [e.text for e in events if isinstance(e, TextDelta)] == [
        "Hello",
        " ther",
        "e, wo",
        "rld",
    ]
    assert isinstance(events[-2], UsageReport)
    assert events[-1] == StreamEnd("stop")


async def test_litellm_rebuilds_the_usage_from_a_few_chunks_not_from_every_one(
    client, fake, monkeypatch
):
    module = litellm_module()
    built: list[int] = []
    original = module.stream_chunk_builder

    def builder(*args, **kwargs):
        built.append(len(kwargs["chunks"]))
        return original(*args, **kwargs)

    monkeypatch.setattr(module, "stream_chunk_builder", builder)
    text = "word " * 300
    fake.enqueue(FakeStep(text=text, chunk_size=3, usage={"completion_tokens": 77}))
    events = await collect(client, request())
    assert text_of(events) == text
    assert [e.usage.completion_tokens for e in events if isinstance(e, UsageReport)] == [77]
    # A provider that does not count the completion: it is counted from the whole text.
    fake.enqueue(FakeStep(text=text, chunk_size=3, usage={"completion_tokens": 0}))
    events = await collect(client, request())
    counted = module.token_counter(model="acdc/fake", text=text, count_response_tokens=True)
    assert [e.usage.completion_tokens for e in events if isinstance(e, UsageReport)] == [counted]
    assert counted > 200 and max(built) <= 4


async def test_it_maps_tool_call_deltas(client, fake):
    fake.enqueue(FakeStep(tool_calls=[{"id": "c1", "name": "activate", "arguments": {"p": 1}}]))
    events = await collect(client, request(tools=[{"type": "function", "function": {"name": "a"}}]))
    assert ToolCallDelta(index=0, id="c1", name="activate", arguments='{"p": 1}') in events
    assert events[-1] == StreamEnd("tool_calls")


async def test_a_stream_the_provider_closes_early_ends_with_no_finish_reason(client, fake):
    # litellm makes up finish_reason "stop" for such a stream; the client must not.
    fake.enqueue(FakeStep(text="cut short", cut=True))
    events = await collect(client, request())
    assert text_of(events) == "cut short"
    assert events[-1] == StreamEnd(None)


async def test_it_passes_on_the_finish_reason_the_provider_gave(client, fake):
    fake.enqueue(FakeStep(text="long", finish_reason="length"))
    assert (await collect(client, request()))[-1] == StreamEnd("length")


async def test_a_stream_with_no_answer_and_no_finish_reason_is_an_error(client, fake):
    fake.enqueue(FakeStep(cut=True))
    with pytest.raises(core.MalformedResponseError):
        await collect(client, request())


async def test_it_reports_cache_tokens_that_came_through_litellms_stream(client, fake):
    usage = {
        "prompt_tokens": 1000,
        "completion_tokens": 5,
        "cache_read_input_tokens": 800,
        "cache_creation_input_tokens": 150,
    }
    fake.enqueue(FakeStep(text="ok", usage=usage))
    events = await collect(client, request())
    assert UsageReport(Usage(1000, 5, 800, 150)) in events


async def test_the_fake_reads_the_prefix_an_earlier_request_wrote(client, fake):
    # Past the 1,024-token minimum below which nothing is cached.
    system = {"role": "system", "content": [{"type": "text", "text": "rules " * 1100}]}
    system["content"][0]["cache_control"] = CACHED
    req = LLMRequest("acdc/fake", [system, {"role": "user", "content": "hi"}])
    first = [e for e in await collect(client, req) if isinstance(e, UsageReport)][0].usage
    second = [e for e in await collect(client, req) if isinstance(e, UsageReport)][0].usage
    assert (first.cache_read_tokens, first.cache_write_tokens > 0) == (0, True)
    assert second.cache_read_tokens == first.cache_write_tokens
    assert second.cache_write_tokens == 0


def test_it_normalizes_openai_style_cached_tokens():
    raw = {
        "prompt_tokens": 2006,
        "completion_tokens": 3,
        "prompt_tokens_details": {"cached_tokens": 1920},
    }
    assert normalize_usage(raw) == Usage(2006, 3, 1920, 0)


def test_it_normalizes_a_litellm_usage_with_anthropic_cache_fields():
    litellm = litellm_module()
    raw = litellm.Usage(
        prompt_tokens=50,
        completion_tokens=2,
        cache_read_input_tokens=30,
        cache_creation_input_tokens=20,
    )
    assert normalize_usage(raw) == Usage(50, 2, 30, 20)


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("rate_limit", core.RateLimitError),
        ("auth", core.AuthenticationError),
        ("server", core.ProviderUnavailableError),
        ("unavailable", core.ProviderUnavailableError),
        ("connection", core.ProviderUnavailableError),
        ("timeout", core.ProviderUnavailableError),
        ("bad_request", core.BadRequestError),
        ("context_window", core.ContextWindowExceededError),
        ("not_found", core.UnknownModelError),
    ],
)
async def test_it_maps_each_provider_error_to_a_contextcore_error(fake, kind, expected):
    assert kind in ERROR_KINDS
    fake.enqueue(FakeStep(error=kind))
    with pytest.raises(expected) as caught:
        await collect(LiteLLMClient(max_retries=0), request())
    assert type(caught.value) is expected
    assert "acdc/fake" in caught.value.user_message
    assert "Traceback" not in caught.value.user_message


def test_it_maps_litellms_unknown_provider_and_missing_key_errors():
    litellm = litellm_module()
    unknown = litellm.BadRequestError(
        message="LLM Provider NOT provided. You passed model=x", model="x", llm_provider=""
    )
    no_key = litellm.InternalServerError(
        message="OpenAIException - Missing credentials.", model="gpt-4o", llm_provider="openai"
    )
    assert isinstance(map_error(unknown, "x"), core.UnknownModelError)
    assert isinstance(map_error(no_key, "gpt-4o"), core.AuthenticationError)
    assert type(map_error(ValueError("odd"), "m")) is core.LLMError


def test_it_unwraps_litellms_mid_stream_fallback_error():
    litellm = litellm_module()
    original = provider_error(FakeStep(error="rate_limit", retry_after=3))
    wrapped = litellm.exceptions.MidStreamFallbackError(
        message="wrapped", model="m", llm_provider="acdc", original_exception=original
    )
    error = map_error(wrapped, "m")
    assert isinstance(error, core.RateLimitError)
    assert error.retry_after == 3


def test_it_reads_retry_after_from_headers_in_seconds_or_milliseconds():
    error = provider_error(FakeStep(error="rate_limit", retry_after=2.5))
    assert retry_after_seconds(error) == 2.5
    error.response.headers["retry-after-ms"] = "1500"
    assert retry_after_seconds(error) == 1.5


def test_each_retry_says_why_in_words_for_the_page():
    def reason(kind: str) -> str:
        return retry_reason(map_error(provider_error(FakeStep(error=kind)), "m"))

    assert reason("rate_limit") == "Rate limited by the provider"
    assert reason("server") == "The provider returned an error (500)"
    assert reason("unavailable") == "The provider returned an error (503)"
    assert reason("connection") == "Could not reach the provider: the connection failed"
    timeout = core.StreamTimeoutError("m sent nothing")
    assert retry_reason(timeout) == "No answer from the provider yet"


def _unresolvable_host() -> Exception:
    """What litellm raises when DNS fails: a 500 InternalServerError, raised from httpx's
    ConnectError, raised from the resolver's gaierror."""
    litellm = litellm_module()
    wrapped = litellm.InternalServerError(
        message="OpenAIException - Connection error.", model="m", llm_provider="openai"
    )
    try:
        try:
            raise socket.gaierror(-2, "Name or service not known")
        except socket.gaierror as resolver:
            message = "Cannot connect to host api.example.invalid:443 [Name or service not known]"
            raise httpx.ConnectError(message) from resolver
    except httpx.ConnectError as connect:
        wrapped.__cause__ = connect
    return wrapped


def test_a_dns_failure_is_said_to_be_an_unreachable_provider_not_an_error_500():
    error = map_error(_unresolvable_host(), "openai/gpt-4.1")
    assert isinstance(error, core.ProviderUnavailableError) and error.status is None
    assert "500" not in error.user_message
    assert error.user_message.startswith("Could not reach the provider of openai/gpt-4.1")
    assert "api.example.invalid: its host name could not be resolved" in error.user_message
    assert (
        retry_reason(error)
        == "Could not reach the provider: its host name could not be resolved (DNS)"
    )


async def test_it_retries_after_the_retry_after_header(client, fake, sleeps):
    fake.enqueue(FakeStep(error="rate_limit", retry_after=7), "Answer after waiting")
    events = await collect(client, request())
    assert events[0] == Retrying("Rate limited by the provider", 7.0, 2, 4)
    assert sleeps == [7.0]
    assert text_of(events) == "Answer after waiting"
    assert len(fake.requests) == 2


async def test_it_backs_off_exponentially_without_a_retry_after(client, fake, sleeps):
    fake.enqueue(FakeStep(error="server"), FakeStep(error="unavailable"), "Finally")
    events = await collect(client, request())
    assert text_of(events) == "Finally"
    assert sleeps == [1.0, 2.0]
    assert [e.delay for e in events if isinstance(e, Retrying)] == sleeps


async def test_it_gives_up_after_max_retries(fake, sleeps):
    fake.enqueue(*[FakeStep(error="server")] * 4)
    with pytest.raises(core.ProviderUnavailableError):
        await collect(LiteLLMClient(max_retries=2, sleep=sleeps), request())
    assert sleeps == [1.0, 2.0]
    assert len(fake.requests) == 3


async def test_it_does_not_wait_for_an_unreasonably_long_retry_after(client, fake, sleeps):
    fake.enqueue(FakeStep(error="rate_limit", retry_after=3600))
    with pytest.raises(core.RateLimitError) as caught:
        await collect(client, request())
    assert sleeps == []
    assert "3600 seconds" in caught.value.user_message


class Clock:
    """Time that passes only when the client sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


async def test_it_does_not_wait_past_the_give_up_deadline(fake):
    fake.enqueue(*[FakeStep(error="rate_limit", retry_after=25)] * 3, "too late")
    clock = Clock()
    client = LiteLLMClient(give_up_after=60, sleep=clock.sleep, clock=clock)
    with pytest.raises(core.RateLimitError):
        await collect(client, request())
    assert clock.sleeps == [25.0, 25.0]
    assert len(fake.requests) == 3


async def test_it_never_retries_an_authentication_error(client, fake, sleeps):
    fake.enqueue(FakeStep(error="auth"), "never sent")
    with pytest.raises(core.AuthenticationError):
        await collect(client, request())
    assert sleeps == [] and len(fake.requests) == 1


async def test_it_never_retries_once_text_was_yielded(client, fake, sleeps):
    fake.enqueue(FakeStep(text="partial answer", chunk_size=4, error="server", error_after=2))
    fake.enqueue("a second answer that must not appear")
    received: list[str] = []
    with pytest.raises(core.ProviderUnavailableError):
        async for event in client.stream(request()):
            if isinstance(event, TextDelta):
                received.append(event.text)
    assert "".join(received) == "partial "
    assert sleeps == [] and len(fake.requests) == 1


async def test_it_gives_up_when_nothing_comes_by_the_deadline(fake):
    # Far slower than the deadline: abandoned at the deadline, so the test does not wait.
    fake.enqueue(FakeStep(text="too slow", chunk_delay=60.0))
    slow = LiteLLMClient(give_up_after=0.05)
    with pytest.raises(core.StreamTimeoutError) as caught:
        await collect(slow, request())
    assert caught.value.user_message == (
        "No answer from acdc/fake in 0.05 s; try again or pick another model."
    )


async def test_it_retries_a_first_chunk_timeout(fake, sleeps):
    # The retry must answer within the limit on a busy machine too: a roomy limit, and a
    # first attempt far slower than it (abandoned at the limit, so the test does not wait).
    fake.enqueue(FakeStep(text="too slow", chunk_delay=60.0), "quick")
    client = LiteLLMClient(first_chunk_timeout=3.0, sleep=sleeps)
    events = await collect(client, request())
    assert events[0] == Retrying("No answer from the provider yet", 1.0, 2, 4)
    assert text_of(events) == "quick"
    assert sleeps == [1.0]


async def test_it_times_out_between_chunks_keeping_what_arrived(fake):
    fake.enqueue(FakeStep(text="abcdefgh", chunk_size=4, chunk_delay=0.3))
    client = LiteLLMClient(first_chunk_timeout=5, between_chunks_timeout=0.05)
    received: list[str] = []
    with pytest.raises(core.StreamTimeoutError):
        async for event in client.stream(request()):
            if isinstance(event, TextDelta):
                received.append(event.text)
    assert received == ["abcd"]


async def test_waiting_for_chunks_sets_no_timer_per_chunk(fake, monkeypatch):
    """The limit between chunks is one timer looked at when due, not one made and
    cancelled per chunk (a cost of every chunk of every reply)."""
    fake.enqueue(FakeStep(text="x" * 200, chunk_size=1))
    loop = asyncio.get_running_loop()
    timers: list[float] = []
    call_at = loop.call_at

    def counted(when, callback, *args, **kwargs):
        timers.append(when)
        return call_at(when, callback, *args, **kwargs)

    monkeypatch.setattr(loop, "call_at", counted)
    client = LiteLLMClient(first_chunk_timeout=5, between_chunks_timeout=5)
    received = [e.text async for e in client.stream(request()) if isinstance(e, TextDelta)]
    assert "".join(received) == "x" * 200
    assert len(timers) < 10


@pytest.mark.parametrize("model", ["nonexistent-provider/xyz", "acdc/nope"])
async def test_an_unknown_model_fails_fast_with_a_clear_message(client, sleeps, model):
    with pytest.raises(core.UnknownModelError) as caught:
        await collect(client, request(model=model))
    assert f"Unknown model {model!r}" in caught.value.user_message
    assert sleeps == []


async def test_it_records_every_request_with_cache_control_intact(fake, tmp_path):
    record = tmp_path / "requests.jsonl"
    messages = [
        {"role": "system", "content": [{"type": "text", "text": "S", "cache_control": CACHED}]},
        {"role": "user", "content": "Q"},
    ]
    tools = [{"type": "function", "function": {"name": "activate", "parameters": {}}}]
    client = LiteLLMClient(record_path=record)
    await collect(client, LLMRequest("acdc/fake", messages, tools=tools))
    await collect(client, LLMRequest("acdc/dry-run", messages))
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert [line["model"] for line in lines] == ["acdc/fake", "acdc/dry-run"]
    assert lines[0]["messages"] == messages
    assert lines[0]["tools"] == tools
    assert lines[0]["time"][:2] == "20"


def test_metadata_and_api_base_go_only_where_they_belong():
    client = LiteLLMClient(api_base="http://127.0.0.1:11434")
    real = client._arguments(request(model="ollama/llama3", metadata={"acdc": {}}))
    offline = client._arguments(request(model="acdc/dry-run", metadata={"acdc": {"x": 1}}))
    assert real["api_base"] == "http://127.0.0.1:11434" and "metadata" not in real
    assert offline["metadata"] == {"acdc": {"x": 1}} and "api_base" not in offline
    assert real["stream_options"] == {"include_usage": True}


def test_model_facts_come_from_litellms_bundled_map():
    facts, warning = model_facts("anthropic/claude-sonnet-4-5", model_info)
    assert warning is None and facts.known
    assert (facts.max_input_tokens, facts.input_cost_per_token) == (200_000, 3e-06)
    assert facts.cache_read_cost_per_token == 3e-07
    assert facts.cache_write_cost_per_token == 3.75e-06
    assert facts.supports_prompt_caching and facts.supports_tools and facts.supports_vision
    assert (facts.min_cacheable_tokens, facts.tokenizer) == (1024, "cl100k_base")


@pytest.mark.parametrize(
    ("model", "min_cacheable", "tokenizer"),
    [
        ("gpt-4o", 1024, "o200k_base"),
        ("openai/gpt-5", 1024, "o200k_base"),
        ("claude-3-haiku-20240307", 2048, "cl100k_base"),
        ("anthropic/claude-3-5-haiku-not-in-the-map", 2048, "cl100k_base"),
        ("openai/gpt-4.1-not-in-the-map", 1024, "o200k_base"),
        ("anthropic/claude-haiku-4-5", 4096, "cl100k_base"),
    ],
)
def test_model_facts_pick_cache_minimum_and_tokenizer_per_model(model, min_cacheable, tokenizer):
    facts, _ = model_facts(model, model_info)
    assert (facts.min_cacheable_tokens, facts.tokenizer) == (min_cacheable, tokenizer)


@pytest.mark.parametrize(
    ("model", "kind", "minimum", "step", "read", "write", "long_write"),
    [
        ("anthropic/claude-sonnet-4-5", "explicit", 1024, 1, 0.1, 1.25, 2.0),
        ("vertex_ai/claude-sonnet-4-5", "explicit", 1024, 1, 0.1, 1.25, 2.0),
        ("openai/gpt-4.1", "automatic", 1024, 128, 0.25, 1.0, 2.0),
        ("openai/gpt-4o", "automatic", 1024, 128, 0.5, 1.0, 2.0),
        ("deepseek/deepseek-chat", "automatic", 64, 64, 0.1, 1.0, 2.0),
        ("gemini/gemini-2.5-pro", "automatic", 2048, 1, 0.1, 1.0, 2.0),
        ("xai/grok-4", "automatic", 1024, 1, 0.16, 1.0, 2.0),
        ("mistral/mistral-large-latest", "none", 1024, 1, 1.0, 1.0, 2.0),
        ("acdc/fake", "explicit", 1024, 1, 0.1, 1.25, 2.0),
    ],
)
def test_cache_rules_follow_the_provider_with_prices_from_the_map(
    model, kind, minimum, step, read, write, long_write
):
    rules = rules_for(model_facts(model, model_info)[0])
    assert (rules.kind, rules.min_tokens, rules.granularity) == (kind, minimum, step)
    assert rules.read_multiplier == pytest.approx(read)
    assert rules.write_multiplier == pytest.approx(write)
    assert rules.long_write_multiplier == pytest.approx(long_write)


def test_an_unknown_model_gets_safe_facts_and_a_warning():
    facts, warning = model_facts("nonexistent-provider/xyz", model_info)
    assert not facts.known and facts.name == "nonexistent-provider/xyz"
    assert warning and "nonexistent-provider/xyz" in warning


def test_the_offline_models_have_facts_of_their_own():
    facts, warning = model_facts("acdc/dry-run", model_info)
    assert warning is None and facts.supports_tools
    assert (facts.max_input_tokens, facts.max_output_tokens) == (200_000, 8_192)
    fake, _ = model_facts("acdc/fake", model_info)
    assert fake.input_cost_per_token > 0


def test_a_dry_run_bills_nothing_but_prices_its_report_with_reference_prices():
    from chat.llm.offline import price_facts

    facts, _ = model_facts("acdc/dry-run", model_info)
    assert facts.input_cost_per_token == facts.output_cost_per_token == 0
    assert price_facts({"price_model": "acdc/dry-run"}).input_cost_per_token > 0
    assert price_facts({}).name.startswith("reference prices")


def test_the_default_model_is_dry_run_without_a_provider_key():
    assert default_model({}) == "acdc/dry-run"
    assert default_model({"OPENAI_API_KEY": ""}) == "acdc/dry-run"
    assert default_model({"OPENAI_API_KEY": "sk"}) == "openai/gpt-4.1"
    assert default_model({"ANTHROPIC_API_KEY": "k"}).startswith("anthropic/")
    assert default_model({"ACDC_MODEL": "ollama/llama3", "OPENAI_API_KEY": "sk"}) == "ollama/llama3"


def test_the_client_satisfies_contextcores_protocol():
    assert isinstance(LiteLLMClient(), core.LLMClient)
