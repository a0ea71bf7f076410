"""A keep-alive refresh through the real pipeline: after a real turn, the session's plan
names when to refresh; the refresh sends the turn's cached prefix with a note, to the
session's model through litellm (`acdc/fake`), is billed like any request, and is claimed
once, never while a turn holds the session."""

from __future__ import annotations

import time

import pytest
from channels.db import database_sync_to_async
from django.template.loader import render_to_string

from chat.live.keepwarm import refresh_text
from chat.live.served import served
from chat.llm.fake import FakeStep, PrefixCache
from chat.session import release_lease, take_lease
from chat.session.endless import set_endless
from chat.session.keepalive import PURPOSE, TURN_ID, next_refresh, refresh
from chat.turn.turns import TurnInput, TurnServices, run_turn
from contextcore.prompt.cacherules import ANTHROPIC
from contextcore.prompt.cachesim import CacheSimulator
from contextcore.prompt.siderequest import REFRESH_NOTE
from contextcore.tokens import TokenCounter
from history.models import TokenUsage
from tests import serving
from tests.chat.sockets import new_session

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def keep_warm(settings) -> None:
    settings.ACDC_KEEP_WARM = True


async def _ignore(event) -> None:
    return None


# A question with a pasted log, long enough for the turn to cache its prompt (below the
# provider's minimum nothing is cached, and there is nothing to keep).
QUESTION = "Why does the parser fail here?\n" + "ERROR parser: unexpected token at 12:4\n" * 150


async def _turn(fake, text: str = QUESTION) -> str:
    """A session after two turns: the second request's history is cached."""
    session = await new_session()
    for question in (text, "And how do I fix it?"):
        fake.enqueue(FakeStep(text="It reads tokens, then " + "builds a tree " * 100))
        finished = await run_turn(
            TurnInput(session_id=session.id, user_text=question),
            TurnServices(emit=_ignore, wiring=served()),
        )
        assert finished.status == "complete"
    return session.id


def _texts(messages) -> list[tuple[str, str]]:
    def text(content) -> str:
        return content if isinstance(content, str) else "".join(b["text"] for b in content)

    return [(m["role"], text(m["content"])) for m in messages]


def _rows(session_id: str) -> list[TokenUsage]:
    return list(TokenUsage.objects.filter(session_id=session_id).order_by("id"))


async def test_a_refresh_resends_the_turns_prefix_and_is_billed(fake):
    session_id = await _turn(fake)
    due = await database_sync_to_async(next_refresh)(session_id, served().runtime)
    assert due is not None and 0 < due - time.time() <= 300  # before a 5-minute expiry

    done = await refresh(session_id, due, served())

    assert done is not None and done.count == 1
    # The provider (the offline model bills through the cache simulator, tools first)
    # reports the chat's prefix read: the refresh renewed it instead of writing a copy.
    rows = await database_sync_to_async(_rows)(session_id)
    turn_cached = rows[-2].cache_read_tokens + rows[-2].cache_write_tokens
    assert done.useful and done.stopped == ""
    assert done.usage.cache_read_tokens >= 0.95 * turn_cached > 0
    assert done.hud["refreshes"]["sent"] == 1
    sent, turn = fake.requests[-1], fake.requests[1]
    assert sent.metadata["purpose"] == PURPOSE and sent.kwargs.get("max_tokens") == 1
    assert sent.messages[-1]["content"].startswith(REFRESH_NOTE)
    # What the turn sent, but the question: the prefix it cached (markers move on).
    assert _texts(sent.messages[: len(turn.messages) - 1]) == _texts(turn.messages[:-1])
    # Under Anthropic's rules (the fake's own cache has no lookback) it reads that prefix.
    simulator = CacheSimulator(TokenCounter("cl100k_base"), ANTHROPIC)
    simulator.request(turn.messages, 0.0)
    read = simulator.request(sent.messages, 270.0)
    assert read.cache_read_tokens > 0.6 * read.prompt_tokens
    rows = await database_sync_to_async(_rows)(session_id)
    assert [r.turn_id for r in rows][-1] == TURN_ID
    assert rows[-1].prompt_tokens == done.usage.prompt_tokens > 0
    assert rows[-1].estimated_prompt_tokens > 0  # a sample for the token calibration too
    assert done.hud["session_cost"] is not None

    assert await refresh(session_id, due, served()) is None  # claimed: a second tab sends nothing
    after = await database_sync_to_async(next_refresh)(session_id, served().runtime)
    assert after is None or after > due


async def test_no_refresh_goes_out_while_a_turn_holds_the_session(fake):
    session_id = await _turn(fake)
    due = await database_sync_to_async(next_refresh)(session_id, served().runtime)
    owner = await database_sync_to_async(take_lease)(session_id, "turn_next")
    try:
        assert await refresh(session_id, due, served()) is None
        assert await database_sync_to_async(next_refresh)(session_id, served().runtime) is None
    finally:
        await database_sync_to_async(release_lease)(session_id, owner)
    assert fake.requests[-1].metadata.get("purpose") != PURPOSE


async def test_a_refresh_too_late_to_keep_anything_is_not_sent(fake):
    session_id = await _turn(fake)
    due = await database_sync_to_async(next_refresh)(session_id, served().runtime)
    assert await refresh(session_id, due + 3600.0, served()) is None  # the prefix expired long ago
    assert await refresh(session_id, due - 60.0, served()) is None  # and not before it is due
    assert len(fake.requests) == 2


async def test_an_endless_session_is_not_refreshed(fake):
    session_id = await _turn(fake)
    assert await database_sync_to_async(next_refresh)(session_id, served().runtime) is not None
    await database_sync_to_async(set_endless)(
        session_id, enabled=True, template="", root=serving.repository().root
    )
    # Its turns send a managed view: a refresh of the working history would be a write.
    assert await database_sync_to_async(next_refresh)(session_id, served().runtime) is None


async def test_with_keep_warm_off_or_nothing_cached_there_is_no_plan(fake, settings):
    session = await new_session()
    fake.enqueue(FakeStep(text="Short."))
    await run_turn(
        TurnInput(session_id=session.id, user_text="Hi"),
        TurnServices(emit=_ignore, wiring=served()),
    )
    assert fake.requests[-1].messages  # sent, but too short for the provider to cache
    assert await database_sync_to_async(next_refresh)(session.id, served().runtime) is None
    settings.ACDC_KEEP_WARM = False
    session_id = await _turn(fake)
    assert await database_sync_to_async(next_refresh)(session_id, served().runtime) is None


async def test_a_refresh_that_reads_too_little_stops_the_sessions_refreshes(fake):
    session_id = await _turn(fake)
    due = await database_sync_to_async(next_refresh)(session_id, served().runtime)
    fake.cache = PrefixCache()  # the provider lost the prefix: the refresh writes it anew

    done = await refresh(session_id, due, served())

    assert done is not None and not done.useful
    assert done.usage.cache_read_tokens == 0 and done.usage.cache_write_tokens > 0
    assert "read 0 of the" in done.stopped
    assert "No more refreshes go out" in refresh_text(done)
    assert done.hud["refreshes"]["stopped"] == done.stopped
    html = render_to_string("chat/_hud.html", {"hud": done.hud})
    assert "Keep-alive: 1 refresh" in html and "stopped: a keep-alive refresh read 0" in html
    # Nothing more is planned for this session, though the plan had more to send.
    assert await database_sync_to_async(next_refresh)(session_id, served().runtime) is None
