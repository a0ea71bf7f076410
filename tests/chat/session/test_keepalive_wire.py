"""Through the real litellm path and a loopback Anthropic Messages API that caches as
Anthropic documents it (`bench.wirefakes`): after a turn, a keep-alive refresh is
billed as a read of the chat's prefix (not a new entry), and a compaction's detector and
summarizer requests read it too. The provider's own usage fields are the judge."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from channels.db import database_sync_to_async

from bench.wirefakes import Clock, Reply, WireFake
from chat.live.served import served
from chat.llm.runtime import Runtime
from chat.session.compaction import compact_session
from chat.session.keepalive import next_refresh, refresh
from chat.turn.turns import TurnInput, TurnServices, run_turn
from tests.chat.sockets import new_session
from tests.serving import install

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.filterwarnings("ignore:Accessing the 'model_:DeprecationWarning"),
]

MODEL = "anthropic/claude-sonnet-4-5"
QUESTIONS = (
    "Why does the parser fail here?\n" + "ERROR parser: unexpected token at 12:4\n" * 150,
    "And how do I fix it?",
    "Which test covers that?",
    "Does the tokenizer need the same fix?",
    "Write the commit message.",
)
ANSWER = "The lexer hands the parser a token it does not expect; " * 30
DETECTOR = '{"boundary_index": null, "boundary_reason": "", "confidence": 0.0, "summary": ""}'


@pytest.fixture
def wire(settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[WireFake]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-loopback-test")
    settings.ACDC_KEEP_WARM = True
    settings.ACDC_SMALLER_MODEL = ""  # the side requests go to the chat's own model
    settings.ACDC_VERBATIM_WINDOW_TOKENS = 200  # so that the older exchanges are summarized
    with WireFake(clock=Clock(start=1_000_000.0)) as fake:
        settings.ACDC_API_BASE = fake.base_url
        install(monkeypatch, runtime=Runtime.from_settings())  # a client talking to the fake
        yield fake


async def _ignore(event) -> None:
    return None


async def _session(wire: WireFake) -> str:
    session = await new_session(model=MODEL)
    for question in QUESTIONS:
        wire.enqueue(ANSWER)
        finished = await run_turn(
            TurnInput(session_id=session.id, user_text=question),
            TurnServices(emit=_ignore, wiring=served()),
        )
        assert finished.status == "complete", finished.error
    return session.id


def _cached(usage: dict) -> int:
    return usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]


async def test_a_refresh_after_a_turn_is_billed_as_a_read_of_the_chats_prefix(wire):
    session_id = await _session(wire)
    turn = wire.requests[-1]
    due = await database_sync_to_async(next_refresh)(session_id, served().runtime)

    done = await refresh(session_id, due, served())

    sent = wire.requests[-1]
    assert done is not None and done.useful, done
    assert sent.body["tools"] == turn.body["tools"]  # the prefix starts with the tools
    assert sent.usage["cache_read_input_tokens"] >= 0.95 * _cached(turn.usage) > 1024
    assert done.usage.cache_read_tokens == sent.usage["cache_read_input_tokens"]


async def test_a_compactions_side_requests_read_the_chats_prefix(wire):
    session_id = await _session(wire)
    turn = wire.requests[-1]
    wire.enqueue(DETECTOR, Reply("They chased a parser error down to the lexer."))

    outcome = await compact_session(session_id, served(), force=True)

    assert outcome.case == "summarize", outcome.note
    side = wire.requests[-2:]
    assert [r.body["max_tokens"] for r in side] == [400, 500]  # detector, summarizer
    for request in side:
        assert request.body["tools"] == turn.body["tools"]
        assert request.usage["cache_read_input_tokens"] >= 0.95 * _cached(turn.usage)
