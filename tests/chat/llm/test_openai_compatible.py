"""LiteLLMClient against a loopback OpenAI-compatible server: every way a stream can end.

The real client, litellm and HTTP, with only the provider faked (tests/chat/llm/
openai_server.py). Retries before the first token use an instant sleep that records its
delays, except where the waiting itself is the behaviour (a provider that sends nothing).
"""

from __future__ import annotations

import pytest

from chat.llm.client import LiteLLMClient
from contextcore import llm as core
from contextcore.llm import LLMRequest, Retrying, StreamEnd, TextDelta, UsageReport
from tests.chat.llm.openai_server import OpenAIServer, answer, error, garbage, hang

# litellm's OpenAI stream path reads pydantic attributes that pydantic 2.11 deprecates.
pytestmark = pytest.mark.filterwarnings("ignore:Accessing the 'model_:DeprecationWarning")


class Sleeps(list[float]):
    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


REQUEST = LLMRequest(model="openai/x", messages=[{"role": "user", "content": "Hello"}])


def client_for(server: OpenAIServer, **kwargs: object) -> LiteLLMClient:
    kwargs.setdefault("sleep", Sleeps())
    return LiteLLMClient(api_base=server.url, **kwargs)


async def run(client: LiteLLMClient) -> tuple[list[object], core.LLMError | None]:
    """Every event the stream yielded, and the error it ended with (if it did)."""
    events: list[object] = []
    try:
        async for event in client.stream(REQUEST):
            events.append(event)
    except core.LLMError as exc:
        return events, exc
    return events, None


def text_of(events: list[object]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_a_finished_answer_ends_with_the_providers_finish_reason(openai_server):
    openai_server.enqueue(answer(["Hel", "lo"]))
    events, failure = await run(client_for(openai_server))
    assert failure is None
    assert text_of(events) == "Hello"
    assert isinstance(events[-2], UsageReport) and events[-2].usage.prompt_tokens == 7
    assert events[-1] == StreamEnd("stop")
    assert openai_server.requests[0]["model"] == "x"
    assert openai_server.requests[0]["stream"] is True


async def test_a_stream_cut_without_finish_reason_or_done_ends_with_no_reason(openai_server):
    openai_server.enqueue(answer(["Half an ", "answer"], finish_reason=None, done=False))
    events, failure = await run(client_for(openai_server))
    assert failure is None
    assert text_of(events) == "Half an answer"
    assert events[-1] == StreamEnd(None)


async def test_done_without_a_finish_reason_is_still_no_reason(openai_server):
    openai_server.enqueue(answer(["Half"], finish_reason=None, done=True))
    events, failure = await run(client_for(openai_server))
    assert failure is None
    assert events[-1] == StreamEnd(None)


async def test_a_finish_reason_without_done_counts_as_finished(openai_server):
    openai_server.enqueue(answer(["Whole"], finish_reason="stop", done=False))
    events, _ = await run(client_for(openai_server))
    assert events[-1] == StreamEnd("stop")


async def test_a_length_limit_is_reported_as_such(openai_server):
    openai_server.enqueue(answer(["Trunc"], finish_reason="length"))
    events, _ = await run(client_for(openai_server))
    assert events[-1] == StreamEnd("length")


async def test_an_empty_answer_that_says_stop_is_an_empty_answer(openai_server):
    openai_server.enqueue(answer([], finish_reason="stop"))
    events, failure = await run(client_for(openai_server))
    assert failure is None
    assert text_of(events) == ""
    assert events[-1] == StreamEnd("stop")


async def test_a_rate_limit_is_announced_at_once_then_retried_after_retry_after(openai_server):
    openai_server.enqueue(error(429, "slow down", {"Retry-After": "12"}), answer(["Later"]))
    sleeps = Sleeps()
    events, failure = await run(client_for(openai_server, sleep=sleeps))
    assert failure is None
    assert events[0] == Retrying("Rate limited by the provider", 12.0, 2, 4)
    assert text_of(events) == "Later"
    assert sleeps == [12.0]
    assert len(openai_server.requests) == 2


async def test_a_server_error_is_announced_with_its_status_then_retried(openai_server):
    openai_server.enqueue(error(500, "boom"), answer(["Fine"]))
    events, failure = await run(client_for(openai_server))
    assert failure is None
    assert events[0] == Retrying("The provider returned an error (500)", 1.0, 2, 4)
    assert text_of(events) == "Fine"


async def test_server_errors_that_persist_fail_after_the_retries(openai_server):
    openai_server.enqueue(*[error(500, "boom")] * 4)
    events, failure = await run(client_for(openai_server, max_retries=3))
    assert isinstance(failure, core.ProviderUnavailableError)
    assert failure.status == 500
    assert "openai/x is unavailable" in failure.user_message
    assert [e.attempt for e in events if isinstance(e, Retrying)] == [2, 3, 4]
    assert len(openai_server.requests) == 4


async def test_a_rejected_key_fails_at_once_with_a_clear_message(openai_server):
    openai_server.enqueue(error(401, "bad key"), answer(["never"]))
    events, failure = await run(client_for(openai_server))
    assert isinstance(failure, core.AuthenticationError)
    assert "did not accept the API key" in failure.user_message
    assert events == [] and len(openai_server.requests) == 1


async def test_a_provider_that_sends_nothing_is_given_up_on_by_the_deadline(openai_server):
    # Real waiting: the deadline is the behaviour. Four seconds in all, one second per
    # attempt but the last, so there is room for a retry even on a busy machine.
    openai_server.enqueue(hang(), hang(), hang(), hang())
    client = LiteLLMClient(
        api_base=openai_server.url, give_up_after=4, first_chunk_timeout=1, backoff_base=0.01
    )
    events, failure = await run(client)
    assert isinstance(failure, core.StreamTimeoutError)
    assert failure.user_message == (
        "No answer from openai/x in 4 s; try again or pick another model."
    )
    assert events and all(e.reason == "No answer from the provider yet" for e in events)
    assert len(openai_server.requests) == len(events) + 1


@pytest.mark.parametrize(
    "reply",
    [
        garbage(b"data: {not json\n\n"),
        garbage(b'data: {"choices": 5}\n\n'),
        garbage(b"<html><body>Welcome to nginx</body></html>", "text/html"),
        garbage(b'{"object": "list", "data": []}', "application/json"),
        garbage(b""),
    ],
    ids=["broken-json", "wrong-shape", "html-page", "plain-json", "empty-body"],
)
async def test_an_unreadable_answer_fails_with_a_clear_message(openai_server, reply):
    openai_server.enqueue(reply, answer(["never"]))
    events, failure = await run(client_for(openai_server))
    assert isinstance(failure, core.MalformedResponseError)
    assert "not a chat-completion stream" in failure.user_message
    assert "ACDC_API_BASE" in failure.user_message
    assert events == [] and len(openai_server.requests) == 1
