"""Compaction in the chat: stored, visible, undoable, and never run twice; checkpoints."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async
from django.conf import settings
from django.test import override_settings

from chat.live.served import served
from chat.llm.fake import FakeStep
from chat.session import SessionContext, checkpoints
from chat.session.compaction import CompactionRefused, compact_session, undo_compaction
from chat.session.setchanges import restore_latest_session, select_files
from chat.session.working import expand
from chat.turn.turns import TurnInput, TurnServices, run_turn
from contextcore.prompt.cachesim import CacheSimulator
from contextcore.tokens import TokenCounter
from history.models import Compaction, Message, Session
from tests import serving
from tests.chat.sockets import new_session

pytestmark = pytest.mark.django_db(transaction=True)
PURPOSES = ("topic_detection", "history_summary")
FILLER = "Tell me more about the parser and the lexer and their error recovery. " * 6


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


async def turns(
    session, fake, count: int, prefix: str = "question", filler: str = FILLER, answer: str = ""
) -> None:
    for number in range(count):
        fake.enqueue(FakeStep(text=answer or f"answer {prefix} {number}"))
        await run_turn(
            TurnInput(
                session_id=session.id, user_text=f"{prefix} {number}: {filler}", model="acdc/fake"
            ),
            TurnServices(emit=ignore, wiring=served()),
        )


@database_sync_to_async
def working_history(session_id):
    return SessionContext.open(session_id, served(), model="acdc/fake").manager.get_history()


def detector(index=None, confidence=0.0) -> FakeStep:
    answer = {"boundary_index": index, "boundary_reason": "r", "confidence": confidence}
    return FakeStep(text=json.dumps({**answer, "summary": "s"}))


def texts(history) -> list[str]:
    return [m["content"][:12] for m in history]


async def test_summarize_replaces_old_exchanges_and_keeps_the_first(fake):
    session = await new_session()
    await turns(session, fake, 6)
    before = await working_history(session.id)
    fake.enqueue(detector(), FakeStep(text="They discussed the parser at length."))

    outcome = await compact_session(session.id, served())

    assert outcome.case == "summarize" and outcome.tokens_after < outcome.tokens_before
    after = await working_history(session.id)
    assert after[0] == before[0]  # the first user message stays verbatim
    assert any("They discussed the parser at length." in m["content"] for m in after)
    assert after[-1] == before[-1] and len(after) < len(before)
    record = await database_sync_to_async(Compaction.objects.get)(session=session)
    assert record.replaced_ids and record.history_before == [] and record.upto_seq is not None
    # References, not copies: only the summary is stored in full.
    assert expand(record.after, before) == after
    assert sum("ref" not in item for item in record.after) <= 2
    note = await database_sync_to_async(
        lambda: Message.objects.filter(session=session, system_event=True).last()
    )()
    assert "→" in note.content and note.edit_results[0]["summary"] == record.summary

    # The next request carries the summary; a reload brings back the compacted history
    # without asking the detector again.
    await turns(session, fake, 1, prefix="later")
    sent = json.dumps(fake.requests[-1].messages)
    assert "They discussed the parser at length." in sent and "question 2:" not in sent
    asked = len(fake.requests)
    restored, _ = await database_sync_to_async(restore_latest_session)(
        str(settings.ACDC_REPO), served()
    )
    assert restored.id == session.id and len(fake.requests) == asked
    assert "They discussed" in json.dumps(await working_history(session.id))


async def test_undo_puts_the_previous_history_back_and_keeps_later_turns(fake):
    session = await new_session()
    await turns(session, fake, 6)
    before = await working_history(session.id)
    fake.enqueue(detector(), FakeStep(text="A summary."))
    await compact_session(session.id, served())
    await turns(session, fake, 1, prefix="after")

    await database_sync_to_async(undo_compaction)(session.id, served())

    restored = await working_history(session.id)
    assert restored[: len(before)] == before
    assert restored[-2]["content"].startswith("after 0")
    with pytest.raises(CompactionRefused, match="no compaction to undo"):
        await database_sync_to_async(undo_compaction)(session.id, served())


async def test_pinned_messages_survive_compaction(fake):
    session = await new_session()
    await turns(session, fake, 6)
    pinned = (await working_history(session.id))[4]  # "question 2 …", an old exchange
    await database_sync_to_async(
        lambda: Message.objects.filter(pk=pinned["id"]).update(pinned=True)
    )()
    await database_sync_to_async(Session.objects.filter(pk=session.id).update)(context_state={})
    fake.enqueue(detector(), FakeStep(text="Summary."))

    await compact_session(session.id, served())

    after = await working_history(session.id)
    assert pinned["content"] in [m["content"] for m in after]


async def test_garbage_from_the_detector_still_summarizes_safely(fake):
    session = await new_session()
    await turns(session, fake, 6)
    fake.enqueue(FakeStep(text='{"boundary_index": 99, "confidence": "high"'), "Summary.")
    outcome = await compact_session(session.id, served())
    assert outcome.case == "summarize"


async def test_a_failing_summarizer_leaves_the_history_alone(fake):
    session = await new_session()
    await turns(session, fake, 6)
    before = await working_history(session.id)
    fake.enqueue(detector(), FakeStep(error="bad_request"))  # not retried
    outcome = await compact_session(session.id, served())
    assert outcome.case == "none" and "could not be made" in outcome.note
    assert await working_history(session.id) == before


async def test_below_the_trigger_nothing_happens_unless_forced(fake):
    session = await new_session()
    await turns(session, fake, 1)
    assert (await compact_session(session.id, served())).case == "none"
    with pytest.raises(CompactionRefused):
        await compact_session((await new_session()).id, served(), force=True)


async def test_a_checkpoint_rolls_back_history_and_sets_aside_later_messages(fake):
    session = await new_session()
    await turns(session, fake, 2)
    before = await working_history(session.id)
    mark = await database_sync_to_async(checkpoints.take)(
        await database_sync_to_async(Session.objects.get)(pk=session.id), label="good state"
    )
    await turns(session, fake, 2, prefix="detour")

    note = await database_sync_to_async(checkpoints.rollback)(
        session.id, mark.id, repo=serving.repository()
    )

    assert "good state" in note and "4 later messages" in note
    assert await working_history(session.id) == before
    rolled = await database_sync_to_async(
        lambda: list(Message.objects.filter(session=session, rolled_back=True))
    )()
    assert {m.content[:8] for m in rolled if m.role == "user"} == {"detour 0", "detour 1"}
    await turns(session, fake, 1, prefix="fresh")
    assert "detour" not in json.dumps(fake.requests[-1].messages)


async def test_rollback_to_another_sessions_checkpoint_is_refused(fake):
    first, second = await new_session(), await new_session()
    mark = await database_sync_to_async(checkpoints.take)(first, label="x")
    with pytest.raises(checkpoints.RollbackRefused, match="another session"):
        await database_sync_to_async(checkpoints.rollback)(
            second.id, mark.id, repo=serving.repository()
        )


async def test_the_detector_and_summarizer_reuse_the_chats_cached_prefix(fake, root):
    (root / "lexer.py").write_text("token = next_token(stream)\n" * 100)  # past 1,024
    with override_settings(ACDC_REPO=root):
        session = await new_session()
        assert (
            await database_sync_to_async(select_files)(
                session.id, wiring=served(), add=["lexer.py"]
            )
            == []
        )
        # Long questions: a transcript large enough that reading the prefix (the edit tools'
        # definitions too) at 0.1x clearly pays, not by a few tokens.
        await turns(session, fake, 8, filler=FILLER * 2)
        chat, tools = fake.requests[-1].messages, fake.requests[-1].tools
        fake.enqueue(detector(), FakeStep(text="They discussed the parser at length."))

        outcome = await compact_session(session.id, served())

    assert outcome.case == "summarize", outcome.note
    detect, summary = [r for r in fake.requests if r.metadata.get("purpose") in PURPOSES]
    assert (detect.metadata["purpose"], summary.metadata["purpose"]) == PURPOSES
    simulator = CacheSimulator(TokenCounter("cl100k_base"))
    simulator.request(chat, now=0, tools=tools)
    # The detector's transcript (every message) costs more than reading the prefix at 0.1x
    # and sending a short index: it reuses the chat's prefix.
    assert detect.messages[0] == chat[0]  # the chat's system prompt, not the detector's
    assert "side task" in detect.messages[-1]["content"]
    assert tools and detect.tools == tools  # the provider caches the tools first
    cost = simulator.request(detect.messages, now=1, tools=detect.tools)
    assert cost.cache_read_tokens > 0.6 * cost.prompt_tokens
    # The summarizer's few old messages are cheaper sent as they are.
    assert summary.messages[0]["content"].startswith("Summarize the earlier part")
    assert len(summary.messages) == 2


async def test_past_twice_the_trigger_a_copied_summary_is_named_as_the_truncation_it_is(
    fake, monkeypatch
):
    session = await new_session()
    await turns(session, fake, 6, prefix="before")
    long_reply = f"The parser keeps a stack of open brackets. {FILLER * 3}"
    await turns(session, fake, 1, prefix="long", answer=long_reply)  # past twice the trigger
    fake.enqueue(detector(), FakeStep(text=long_reply[:200] + " ..."))  # a cut copy
    # As a provider's model: past twice the trigger, a failed summary truncates instead.
    monkeypatch.setattr("chat.session.compaction.OFFLINE_MODELS", ())
    outcome = await compact_session(session.id, served())

    assert outcome.case == "truncate" and not outcome.summary, outcome
    assert "the summary could not be made, so the oldest exchanges were dropped" in outcome.note
    assert "topic change" not in outcome.note and "summarized" not in outcome.note
    event = await database_sync_to_async(
        Message.objects.filter(session=session, system_event=True).latest
    )("seq")
    assert event.content.startswith("History compacted (the summary could not be made")


async def test_compact_now_never_drops_messages_for_a_summary_not_made(fake, monkeypatch):
    monkeypatch.setattr("chat.session.compaction.OFFLINE_MODELS", ())  # a provider's model
    session = await new_session()
    await turns(session, fake, 4)
    before = await working_history(session.id)
    fake.enqueue(detector(), FakeStep(error="bad_request"))
    outcome = await compact_session(session.id, served(), force=True)
    assert outcome.case == "none" and "nothing was compacted" in outcome.note, outcome
    assert await working_history(session.id) == before
