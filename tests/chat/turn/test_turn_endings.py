"""Every ending of a turn is told truly, through the real client and a loopback
OpenAI-compatible server: a cut stream, an empty answer, a failure before the first
token (stored, so a reload shows it), a rate limit (said at once), a silent provider
(given up on within the deadline)."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from chat.live.served import served
from chat.llm.client import LiteLLMClient
from chat.turn.events import TurnDelta, TurnFinished, TurnNotice
from chat.turn.turns import TurnInput, TurnServices, run_turn
from chat.web.conversation import conversation_items
from history.models import Message
from tests.chat.llm.openai_server import answer, error, hang
from tests.chat.sockets import new_session

pytestmark = pytest.mark.django_db(transaction=True)


async def ask(server, text: str = "question", give_up_after: float = 30.0):
    session = await new_session(model="openai/x")
    events = []

    async def emit(event) -> None:
        events.append(event)

    client = LiteLLMClient(api_base=server.url, give_up_after=give_up_after, backoff_base=0.01)
    finished = await run_turn(
        TurnInput(session_id=session.id, user_text=text, model="openai/x"),
        TurnServices(emit=emit, wiring=served(), client=client),
    )
    rows = await database_sync_to_async(
        lambda: list(Message.objects.filter(session=session).order_by("seq"))
    )()
    return finished, events, rows, session


def notices(events) -> list[str]:
    return [e.text for e in events if isinstance(e, TurnNotice)]


async def test_a_stream_cut_without_a_finish_reason_is_interrupted(openai_server):
    openai_server.enqueue(answer(["The parser ", "reads tok"], finish_reason=None, done=False))
    finished, events, rows, _ = await ask(openai_server)
    assert finished.status == "interrupted"
    reply = rows[-1]
    assert (reply.role, reply.status, reply.content) == (
        "assistant",
        "interrupted",
        "The parser reads tok",
    )
    assert "closed the stream early" in reply.error


async def test_an_empty_answer_is_complete_with_a_notice(openai_server):
    openai_server.enqueue(answer([]))
    finished, events, rows, _ = await ask(openai_server)
    assert finished.status == "complete" and finished.text == ""
    assert any("empty answer" in text for text in notices(events))
    assert any(r.system_event and "empty answer" in r.content for r in rows)


async def test_a_failure_before_the_first_token_is_stored_and_shown_after_a_reload(openai_server):
    openai_server.enqueue(error(401, "Incorrect API key provided"))
    finished, events, rows, session = await ask(openai_server)
    assert finished.status == "error" and finished.error
    turn = [r for r in rows if not r.system_event]
    assert [r.role for r in turn] == ["user", "assistant"]
    assert turn[1].status == "error" and turn[1].error == finished.error
    page = await database_sync_to_async(conversation_items)(session)
    assert page[-1]["message"].status == "error"


async def test_a_rate_limit_is_said_at_once_and_the_turn_goes_on(openai_server):
    openai_server.enqueue(error(429, "slow down", {"Retry-After": "1"}), answer(["Fine."]))
    finished, events, rows, _ = await ask(openai_server)
    assert finished.status == "complete" and finished.text == "Fine."
    said = [i for i, e in enumerate(events) if isinstance(e, TurnNotice) and "retrying" in e.text]
    first_text = next(i for i, e in enumerate(events) if isinstance(e, TurnDelta))
    assert said and said[0] < first_text
    assert "Rate limited by the provider; retrying in 1 s (attempt 2" in events[said[0]].text


async def test_a_silent_provider_is_given_up_on_within_the_deadline(openai_server):
    openai_server.enqueue(hang(), hang(), hang(), hang())
    finished, events, rows, _ = await ask(openai_server, give_up_after=3.0)
    assert finished.status == "error" and "No answer" in finished.error
    assert rows[-1].status == "error"
    assert isinstance(events[-1], TurnFinished) or isinstance(events[-2], TurnFinished)
