"""The reply's "What the model saw" note: made by the live turn, the same after a reload."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from django.test import override_settings

from chat.live.frames import render_event
from chat.live.served import served
from chat.llm.fake import FakeStep
from chat.session.endless import set_endless
from chat.turn.events import TurnFinished
from chat.turn.turns import TurnInput, TurnServices, run_turn
from chat.web.conversation import conversation_items, render_conversation
from history import services
from history.models import Session
from tests import serving
from tests.chat.sockets import new_session


def panel():
    """The Files panel's parts of the test's own served object (tests/conftest.py)."""
    return served().files


pytestmark = pytest.mark.django_db(transaction=True)
SUMMARY = (
    "History compacted (summarized): 8 messages replaced, 9,000 → 900 tokens.\n\n"
    "The tokenizer cache is keyed by content hash; never key it by path."
)


async def turn(session, text: str) -> TurnFinished:
    events = []

    async def keep(event) -> None:
        events.append(event)

    await run_turn(
        TurnInput(session_id=session.id, user_text=text, model="acdc/fake"),
        TurnServices(emit=keep, wiring=served()),
    )
    [finished] = [e for e in events if isinstance(e, TurnFinished)]
    return finished


@database_sync_to_async
def reloaded_note(session) -> dict | None:
    session = Session.objects.get(pk=session.pk)
    replies = [
        i
        for i in conversation_items(session)
        if i.get("message") and i["message"].role == "assistant"
    ]
    return replies[-1]["seen"]


@database_sync_to_async
def page_html(session) -> str:
    return render_conversation(Session.objects.get(pk=session.pk))


async def test_a_reply_names_the_related_items_it_was_offered_with_source_and_relevance(fake):
    earlier = await new_session()
    await database_sync_to_async(services.message_append)(
        session=earlier, role="system", system_event=True, content=SUMMARY
    )
    await database_sync_to_async(Session.objects.filter(pk=earlier.pk).update)(title="Cache talk")
    session = await new_session(grounding=True)

    finished = await turn(session, "How is the tokenizer cache keyed?")

    [item] = finished.seen["related"]
    assert finished.seen["endless"] is None
    assert item["label"] == "Earlier summary" and "never key it by path" in item["text"]
    assert item["session_id"] == earlier.id and item["session_title"] == "Cache talk"
    assert 0 < item["percent"] <= 100
    assert await reloaded_note(session) == finished.seen
    html = await page_html(session)
    assert "What the model saw" in html and f"/history/{earlier.id}/" in html
    assert f"relevance {item['percent']}%" in html
    live = await database_sync_to_async(render_event)(finished, panel())
    assert "never key it by path" in live[0]


@override_settings(ACDC_SMALLER_MODEL="acdc/fake", ACDC_ENDLESS_PASSTHROUGH_RUNS=1)
async def test_an_endless_reply_shows_the_managed_summary_and_its_template(fake):
    session = await new_session()
    for n in range(3):
        await turn(session, f"plain turn {n}")
    assert not await database_sync_to_async(set_endless)(
        session.id, enabled=True, template="default", root=serving.repository().root
    )
    fake.enqueue(FakeStep(text="- Instructions: keep it short"), FakeStep(text="Managed answer."))

    finished = await turn(session, "what now?")

    endless = finished.seen["endless"]
    assert endless["template"] == "default" and endless["source"] == "builtin"
    assert "keep it short" in endless["summary"]
    assert await reloaded_note(session) == finished.seen
    html = await page_html(session)
    assert html.count('class="seen-note"') == 1  # only the managed turn has one
    assert "keep it short" in html and "built in" in html


async def test_a_reply_that_saw_only_the_history_has_no_note(fake):
    session = await new_session()
    finished = await turn(session, "hello")
    assert finished.seen is None
    assert await reloaded_note(session) is None
    assert "What the model saw" not in await page_html(session)
