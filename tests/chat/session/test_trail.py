"""The artifact trail: in the request the model is sent after the history was cut."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async
from django.test import override_settings

from chat.live.served import served
from chat.llm.fake import FakeStep
from chat.session import SessionContext
from chat.session.compaction import compact_session
from chat.session.endless import set_endless
from chat.session.trail import failing_tests
from chat.turn.turns import TurnInput, TurnServices, run_turn
from history.models import CommandRun, Compaction, Message, PendingEdit
from tests import serving
from tests.chat.sockets import new_session

pytestmark = pytest.mark.django_db(transaction=True)
FILLER = "Tell me more about the parser and the lexer and their error recovery. " * 6
PYTEST_OUTPUT = (
    "..F.\n"
    "=================================== FAILURES ===================================\n"
    "________________________________ test_recovery _________________________________\n"
    "E   AssertionError: assert 2 == 3\n"
    "=========================== short test summary info ============================\n"
    "FAILED tests/test_parser.py::test_recovery - AssertionError: assert 2 == 3\n"
    "========================= 1 failed, 3 passed in 0.12s ==========================\n"
)
APPLIED = "edited src/parser.py (+2 -1), turn 1: applied"
UNDONE = "edited src/lexer.py (+1 -1), turn 1: undone"
FAILED = "ran `pytest -q` (tests), turn 1: exit 1; failed: tests/test_parser.py::test_recovery"


@pytest.fixture(autouse=True)
def small_windows():
    with override_settings(
        ACDC_COMPACTION_TRIGGER_TOKENS=400,
        ACDC_VERBATIM_WINDOW_TOKENS=150,
        ACDC_SMALLER_MODEL="acdc/fake",
        ACDC_CHECKPOINT_EVERY=0,
    ):
        yield


async def ignore(event) -> None:
    return None


async def turns(session, fake, count: int, prefix: str = "question") -> None:
    for number in range(count):
        fake.enqueue(FakeStep(text=f"answer {prefix} {number}"))
        await run_turn(
            TurnInput(
                session_id=session.id, user_text=f"{prefix} {number}: {FILLER}", model="acdc/fake"
            ),
            TurnServices(emit=ignore, wiring=served()),
        )


@database_sync_to_async
def store_artifacts(session) -> None:
    """What the first turn did, as the store keeps it: an edit applied, one undone since,
    and a check that failed."""
    edit = {"session": session, "kind": PendingEdit.Kind.REPLACE}
    PendingEdit.objects.create(
        **edit, path="src/parser.py", old_text="a\nb\n", new_text="a\nB\nc\n", status="applied"
    )
    PendingEdit.objects.create(
        **edit, path="src/lexer.py", old_text="x = 1\n", new_text="x = 2\n", status="undone"
    )
    CommandRun.objects.create(
        session=session,
        name="tests",
        argv=["pytest", "-q"],
        exit_code=1,
        ending="exited",
        output=PYTEST_OUTPUT,
    )


def trail_sent(fake) -> str:
    """The artifact trail's message of the last chat request ("" if it carries none)."""
    for message in fake.requests[-1].messages:
        content = message["content"]
        if isinstance(content, str) and content.startswith("# Artifact trail"):
            return content
    return ""


def assert_lists_the_artifacts(trail: str) -> None:
    for line in (APPLIED, UNDONE, FAILED):
        assert f"- {line}" in trail, trail


async def test_the_trail_is_sent_after_a_compaction_and_shown_in_the_hud(fake):
    session = await new_session()
    await turns(session, fake, 1)
    await store_artifacts(session)
    await turns(session, fake, 5, prefix="more")
    assert trail_sent(fake) == ""  # the history holds it all still
    fake.enqueue(
        FakeStep(text=json.dumps({"boundary_index": None, "confidence": 0.0, "summary": "s"})),
        FakeStep(text="They discussed the parser."),
    )

    # As after a turn: the context handed over holds that turn's breakdown, made before.
    ctx = await database_sync_to_async(SessionContext.open)(session.id, served())
    ctx.breakdown = ctx.manager.preview_request("").breakdown
    outcome = await compact_session(session.id, served(), ctx=ctx)

    assert outcome.case == "summarize" and outcome.messages_after < outcome.messages_before
    assert outcome.hud["trail"]["lines"] == [APPLIED, UNDONE, FAILED]
    assert outcome.hud["trail"]["tokens"] > 0
    assert "Artifact trail" in [s["label"] for s in outcome.hud["sections"]]
    await turns(session, fake, 1, prefix="later")
    sent = json.dumps(fake.requests[-1].messages)
    assert "They discussed the parser." in sent and "more 0:" not in sent
    assert_lists_the_artifacts(trail_sent(fake))


async def test_the_trail_is_sent_after_an_emergency_truncation(fake):
    session = await new_session()
    await turns(session, fake, 1)
    await store_artifacts(session)

    await turns(session, fake, 14, prefix="more")

    sent = json.dumps(fake.requests[-1].messages)
    assert "question 0:" not in sent  # the oldest exchanges were dropped
    rewrites = await database_sync_to_async(
        Compaction.objects.filter(session=session, case=Compaction.Case.REWRITE).count
    )()
    assert rewrites >= 1
    assert_lists_the_artifacts(trail_sent(fake))


@override_settings(ACDC_ENDLESS_PASSTHROUGH_RUNS=1)
async def test_the_trail_is_sent_in_endless_mode(fake):
    session = await new_session()
    await turns(session, fake, 1)
    await store_artifacts(session)
    await database_sync_to_async(
        lambda: Message.objects.filter(session=session, role="user").update(pinned=True)
    )()
    await turns(session, fake, 2, prefix="more")
    set_on = await database_sync_to_async(set_endless)(
        session.id, enabled=True, template="default", root=serving.repository().root
    )
    assert set_on == ""
    fake.enqueue(FakeStep(text="- Instructions: keep it short"), FakeStep(text="Managed."))

    await run_turn(
        TurnInput(session_id=session.id, user_text="now?", model="acdc/fake"),
        TurnServices(emit=ignore, wiring=served()),
    )

    sent = json.dumps(fake.requests[-1].messages)
    assert "Context summary (managed)" in sent and "more 0:" not in sent
    trail = trail_sent(fake)
    assert_lists_the_artifacts(trail)
    assert "- pinned user message, turn 1: question 0: Tell me more" in trail


def test_failing_tests_are_named_from_the_runners_output():
    go = "--- FAIL: TestParse (0.00s)\nFAIL\nFAIL\texample.com/p\t0.01s\n"
    assert failing_tests(PYTEST_OUTPUT) == ["tests/test_parser.py::test_recovery"]
    assert failing_tests(go) == ["TestParse"]
    assert failing_tests("1 passed in 0.1s\n") == []
