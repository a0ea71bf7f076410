"""One session context per turn: few statements, a lease per session, a history derived
from the rows that matches what the engine held, and settings a rollback leaves alone."""

from __future__ import annotations

import asyncio
import json

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from django.db import connection
from django.test.utils import CaptureQueriesContext

from chat.live.served import served
from chat.llm.fake import FakeStep
from chat.repo import sessionsets
from chat.session import SessionContext, checkpoints, endless
from chat.turn.after_turn import after_turn_tasks
from chat.turn.turns import TurnInput, TurnRejected, TurnServices, run_turn
from history import services
from history.models import Checkpoint, Message, Session, TokenUsage
from tests import serving
from tests.chat.sockets import new_session

pytestmark = pytest.mark.django_db(transaction=True)
PLAIN_TURN_QUERIES = 11  # besides the BEGIN of each of its two transactions


async def ignore(event) -> None:
    return None


async def after(ctx) -> None:
    await after_turn_tasks(ctx, ignore)


def plain_turn(session_id: str, text: str) -> None:
    async_to_sync(run_turn)(
        TurnInput(session_id=session_id, user_text=text, model="acdc/fake"),
        TurnServices(emit=ignore, wiring=served(), after=after),
    )


def test_a_plain_turn_with_one_file_takes_at_most_eleven_statements(fake, settings):
    settings.ACDC_CHECKPOINT_EVERY = 10
    settings.ACDC_EDITS = True  # offered, not used: a turn without an edit reads no edit rows
    session = services.session_create(repository=str(settings.ACDC_REPO), model="acdc/fake")
    sessionsets.activate(session, "src/app.py", repo=serving.repository())
    for number in range(3):  # a session with some history, its layout settled
        plain_turn(session.id, f"warm-up {number}")

    with CaptureQueriesContext(connection) as captured:
        plain_turn(session.id, "what does greet do?")

    statements = [q["sql"] for q in captured.captured_queries if not q["sql"].startswith("BEGIN")]
    assert len(statements) <= PLAIN_TURN_QUERIES, "\n".join(statements)
    assert "def greet(name)" in json.dumps(fake.requests[-1].messages)
    assert Message.objects.filter(session=session).count() == 8


def test_the_derived_history_is_what_the_engine_held(fake):
    session = services.session_create(repository="x", model="acdc/fake")
    for number in range(4):
        fake.enqueue(FakeStep(text=f"answer {number}"))
        plain_turn(session.id, f"question {number}")
    live = SessionContext.open(session.id, served())
    history = live.manager.get_history()
    assert [m["content"] for m in history] == [
        text for n in range(4) for text in (f"question {n}", f"answer {n}")
    ]
    header = Session.objects.get(pk=session.pk).context_state
    assert "history" not in header["engine"]  # rows hold it, not the header
    assert not any(k.startswith("history:") for k in header["engine"]["stability"]["items"])


async def test_two_turns_at_once_on_one_session_never_interleave(fake):
    """Two workers (or tabs) sending at once: one turn runs, the other is refused with a
    clear message, and the history stays question, answer, question, answer."""
    fake.enqueue(FakeStep(text="answer A " * 20, chunk_size=4, chunk_delay=0.005))
    fake.enqueue(FakeStep(text="answer B"))
    session = await new_session()

    async def send(text):
        try:
            return await run_turn(
                TurnInput(session_id=session.id, user_text=text),
                TurnServices(emit=ignore, wiring=served()),
            )
        except TurnRejected as exc:
            return str(exc)

    results = await asyncio.gather(send("tab one asks"), send("tab two asks"))
    refusals = [r for r in results if isinstance(r, str)]
    assert len(refusals) == 1 and "already being written" in refusals[0]
    await run_turn(
        TurnInput(session_id=session.id, user_text="and then?"),
        TurnServices(emit=ignore, wiring=served()),
    )
    rows = await database_sync_to_async(
        lambda: list(Message.objects.filter(session=session).values_list("role", "seq"))
    )()
    assert [role for role, _ in rows] == ["user", "assistant", "user", "assistant"]
    assert [seq for _, seq in rows] == [0, 1, 2, 3]
    history = await database_sync_to_async(
        lambda: SessionContext.open(session.id, served()).manager.get_history()
    )()
    assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant"]


async def test_a_dead_workers_lease_expires(fake, settings):
    settings.ACDC_TURN_LEASE_SECONDS = 5
    session = await new_session()
    from django.utils import timezone

    await database_sync_to_async(
        lambda: Session.objects.filter(pk=session.pk).update(
            turn_owner="gone:1:abc", turn_id="t", turn_expires=timezone.now()
        )
    )()
    finished = await run_turn(
        TurnInput(session_id=session.id, user_text="still there?"),
        TurnServices(emit=ignore, wiring=served()),
    )
    assert finished.status == "complete"


def test_a_rollback_restores_context_not_settings(fake):
    session = services.session_create(repository="x", model="acdc/fake")
    plain_turn(session.id, "one")
    mark = checkpoints.take(Session.objects.get(pk=session.pk), label="after one")
    assert (
        endless.set_endless(
            session.id, enabled=True, template="default", root=serving.repository().root
        )
        == ""
    )
    Session.objects.filter(pk=session.pk).update(grounding=True)
    plain_turn(session.id, "two")

    checkpoints.rollback(session.id, mark.id, repo=serving.repository())

    session.refresh_from_db()
    assert session.endless["enabled"] is True and session.grounding is True
    history = SessionContext.open(session.id, served()).manager.get_history()
    assert [m["content"] for m in history if m["role"] == "user"] == ["one"]
    assert Checkpoint.objects.filter(session=session).count() == 2  # with "Before rollback"
    before = Checkpoint.objects.get(session=session, label="Before rollback")
    assert before.kind == Checkpoint.Kind.AUTO  # taken by acdc, not by the person


async def test_after_every_kind_of_turn_a_reload_derives_the_history_the_engine_held(fake):
    """The working history is never saved: what a new process derives from the rows must
    be exactly what the live engine held, whatever the turn's ending, tools, compaction."""
    session = await new_session()
    held_by_engine = []

    async def remember(ctx) -> None:
        held_by_engine.append(ctx.manager.get_history())

    async def derived():
        return await database_sync_to_async(
            lambda: SessionContext.open(session.id, served()).manager.get_history()
        )()

    steps = [
        FakeStep(text="plain answer"),
        FakeStep(tool_calls=[{"name": "read_file", "arguments": {"path": "src/app.py"}}]),
        FakeStep(text="after reading"),
        FakeStep(text="cut off", cut=True),
        FakeStep(error="auth"),
        FakeStep(text=""),
    ]
    fake.enqueue(*steps)
    for number in range(5):
        held_by_engine.clear()
        finished = await run_turn(
            TurnInput(session_id=session.id, user_text=f"question {number}"),
            TurnServices(emit=ignore, wiring=served(), after=remember),
        )
        live = held_by_engine[-1] if held_by_engine else None
        reloaded = await derived()
        if live is not None:  # complete turns hand their context over
            assert reloaded == live, finished.status
    contents = [m["content"] for m in await derived()]
    assert "plain answer" in contents and "cut off" in contents
    assert any(c.startswith("toolcall_ref id=") and c.endswith("after reading") for c in contents)
    assert "question 3" not in contents  # the failed turn is not history


def test_at_start_up_a_dead_processes_turn_ends_as_interrupted_with_its_text(fake):
    from chat.session import end_dead_turns

    session = services.session_create(repository="x", model="acdc/fake")
    services.message_append(session=session, role="user", content="go", turn_id="t1")
    reply = services.message_append(
        session=session, role="assistant", content="half of it", turn_id="t1", status="streaming"
    )
    gone = "{}:999999999:abc".format(__import__("socket").gethostname())  # no such pid
    from datetime import timedelta

    from django.utils import timezone

    Session.objects.filter(pk=session.pk).update(
        turn_owner=gone, turn_id="t1", turn_expires=timezone.now() + timedelta(minutes=5)
    )

    assert end_dead_turns() == 1

    reply.refresh_from_db()
    assert reply.status == "interrupted" and reply.content == "half of it"
    assert Session.objects.get(pk=session.pk).turn_owner == ""


@pytest.mark.django_db
def test_a_session_opens_with_the_token_correction_its_models_usage_calls_for():
    claude = services.session_create(repository="x", model="anthropic/claude-sonnet-4-5")
    fake = services.session_create(repository="x", model="acdc/fake")
    for session in (claude, fake):
        for n in range(3):
            TokenUsage.objects.create(
                session=session,
                turn_id=f"t{n}",
                model=session.model,
                estimated_prompt_tokens=20_000,
                prompt_tokens=23_000,
            )
    opened = SessionContext.open(claude.id, served())
    assert opened.facts.token_factor == pytest.approx(1.15 * 1.05)
    assert opened.manager.facts.input_budget < opened.facts.max_input_tokens / 1.15
    # The offline models are counted by acdc's own counter: nothing to correct.
    assert SessionContext.open(fake.id, served()).facts.token_factor == 1.0
