"""Endless mode and grounding through real turns with the scripted fake model."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async
from django.conf import settings
from django.test import override_settings

from chat.live.served import served
from chat.llm.fake import FakeStep
from chat.session.endless import set_endless
from chat.turn.turns import TurnInput, TurnServices, run_turn
from history import services
from history.models import ManagedView, Message, Session
from tests import serving
from tests.chat.sockets import new_session

pytestmark = pytest.mark.django_db(transaction=True)


async def ignore(event) -> None:
    return None


async def turn(session, text: str) -> None:
    await run_turn(
        TurnInput(session_id=session.id, user_text=text, model="acdc/fake"),
        TurnServices(emit=ignore, wiring=served()),
    )


@database_sync_to_async
def views(session):
    return list(ManagedView.objects.filter(session=session).order_by("id"))


@override_settings(ACDC_SMALLER_MODEL="acdc/fake", ACDC_ENDLESS_PASSTHROUGH_RUNS=1)
async def test_endless_mode_sends_a_managed_summary_before_the_recent_run(fake):
    session = await new_session()
    for n in range(3):
        await turn(session, f"plain turn {n}")
    assert (
        await database_sync_to_async(set_endless)(
            session.id, enabled=True, template="default", root=serving.repository().root
        )
        == ""
    )
    fake.enqueue(FakeStep(text="- Instructions: keep it short"), FakeStep(text="Managed answer."))

    await turn(session, "what now?")

    manager_request, chat_request = fake.requests[-2], fake.requests[-1]
    assert "plain turn 2" in json.dumps(manager_request.messages)
    sent = json.dumps(chat_request.messages)
    assert "Context summary (managed)" in sent and "keep it short" in sent
    assert "plain turn 0" not in sent and "plain turn 2" in sent  # one run passes through
    [view] = await views(session)
    assert not view.failed and view.template_source == "builtin" and view.template_hash
    assert view.managed_prompt and view.model == "acdc/fake"


@override_settings(ACDC_SMALLER_MODEL="acdc/fake")
async def test_a_broken_repo_template_fails_open_with_a_notice(fake):
    templates = settings.ACDC_REPO / ".acdc" / "templates"
    templates.mkdir(parents=True, exist_ok=True)
    (templates / "mine.md").write_text("Summarize.\n")
    session = await new_session()
    for n in range(3):
        await turn(session, f"turn {n}")
    assert (
        await database_sync_to_async(set_endless)(
            session.id, enabled=True, template="mine", root=serving.repository().root
        )
        == ""
    )
    (templates / "mine.md").write_text("")  # emptied after it was chosen

    await turn(session, "and now?")

    sent = json.dumps(fake.requests[-1].messages)
    assert "turn 0" in sent and "Context summary (managed)" not in sent
    [view] = await views(session)
    assert view.failed and "empty" in view.error
    notice = await database_sync_to_async(
        lambda: Message.objects.filter(session=session, system_event=True).last()
    )()
    assert "Endless mode used the full history" in notice.content


async def test_choosing_a_template_that_does_not_exist_is_refused():
    session = await new_session()
    refusal = await database_sync_to_async(set_endless)(
        session.id, enabled=True, template="../etc", root=serving.repository().root
    )
    assert refusal
    assert (await database_sync_to_async(Session.objects.get)(pk=session.pk)).context_state == {}


async def test_grounding_offers_an_earlier_summary_from_another_session(fake):
    earlier = await new_session()
    await database_sync_to_async(services.message_append)(
        session=earlier,
        role="system",
        system_event=True,
        content="History compacted (summarized): 8 messages replaced, 9,000 → 900 tokens.\n\n"
        "The tokenizer cache is keyed by content hash; never key it by path.",
    )
    session = await new_session(grounding=True)

    await turn(session, "How is the tokenizer cache keyed?")

    sent = json.dumps(fake.requests[-1].messages)
    assert "Earlier summary" in sent and "never key it by path" in sent
    hud = (await database_sync_to_async(Session.objects.get)(pk=session.pk)).context_state["hud"]
    assert hud["quality"]["parts"]["grounding"] > 0


async def test_without_grounding_the_hud_still_scores_the_context(fake):
    session = await new_session()
    await turn(session, "hello")
    hud = (await database_sync_to_async(Session.objects.get)(pk=session.pk)).context_state["hud"]
    assert 0 < hud["quality"]["percent"] <= 100 and "grounding" not in hud["quality"]["parts"]
    assert "Earlier summary" not in json.dumps(fake.requests[-1].messages)


def _texts(messages) -> list[tuple[str, str]]:
    def text(content) -> str:
        if isinstance(content, str):
            return content
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))

    return [(m["role"], text(m["content"])) for m in messages]


@override_settings(ACDC_SMALLER_MODEL="", ACDC_ENDLESS_PASSTHROUGH_RUNS=1)
async def test_the_manager_request_reuses_what_the_chat_sent_last_turn(fake):
    """The manager model is the chat's model: after a turn that used a managed view, the
    next manager request starts with that turn's chat request up to its last cache
    breakpoint (cached at the provider), and lists the runs it holds cut short."""
    session = await new_session()
    long_answer = "The parser reads tokens one by one and keeps a stack. " * 200
    for n in range(3):
        fake.enqueue(FakeStep(text=f"answer {n}: {long_answer}"))
        await turn(session, f"plain turn {n}")
    await database_sync_to_async(set_endless)(
        session.id, enabled=True, template="default", root=serving.repository().root
    )
    fake.enqueue(FakeStep(text="- Goal: fix the parser"), FakeStep(text="answer 3: " + long_answer))
    await turn(session, "first managed turn")
    chat_before = fake.requests[-1].messages
    fake.enqueue(FakeStep(text="- Goal: fix the parser, then test"), FakeStep(text="Done."))

    await turn(session, "second managed turn")

    manager_request = fake.requests[-2].messages
    marks = [i for i, m in enumerate(chat_before) if "cache_control" in json.dumps(m)]
    assert marks, "the chat request marked no cache breakpoint"
    held = marks[-1] + 1
    assert _texts(manager_request[:held]) == _texts(chat_before[:held])
    tail = _texts(manager_request[-1:])[0][1]
    assert "You are the context manager" in tail and "second managed turn" in tail
    assert "(the Context summary (managed) above)" in tail
    views_now = await views(session)
    assert views_now[-1].input_payload["reused_prefix_messages"] == held
    assert views_now[0].input_payload["reused_prefix_messages"] == 0  # nothing sent before


async def endless_after_turns(session, count: int) -> None:
    for n in range(count):
        await turn(session, f"plain turn {n}")
    assert (
        await database_sync_to_async(set_endless)(
            session.id, enabled=True, template="default", root=serving.repository().root
        )
        == ""
    )


@database_sync_to_async
def notices(session) -> list[str]:
    return list(
        Message.objects.filter(session=session, system_event=True).values_list("content", flat=True)
    )


@override_settings(ACDC_SMALLER_MODEL="acdc/dry-run")
async def test_endless_mode_with_the_dry_run_says_what_it_would_send_and_keeps_no_view(fake):
    session = await new_session()
    await endless_after_turns(session, 3)

    await turn(session, "what now?")

    assert await views(session) == []
    sent = json.dumps(fake.requests[-1].messages)
    assert "Context summary (managed)" not in sent and "plain turn 0" in sent
    assert any("Dry run: Endless mode would send" in text for text in await notices(session))


@override_settings(ACDC_SMALLER_MODEL="acdc/fake")
async def test_endless_mode_with_an_unscripted_fake_keeps_no_managed_view(fake):
    session = await new_session()
    await endless_after_turns(session, 3)

    await turn(session, "what now?")

    sent = json.dumps(fake.requests[-1].messages)
    assert "Context summary (managed)" not in sent and "plain turn 0" in sent
    assert [view.failed for view in await views(session)] == [True]
