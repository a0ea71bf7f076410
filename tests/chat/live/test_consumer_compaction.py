"""Compaction over the websocket: after a reply past the trigger, on demand, and queueing."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async
from django.test import override_settings

from chat.llm.fake import FakeStep, echo_reply
from history.models import Compaction, Message
from tests.chat.sockets import connect, frames_until, new_session, send

pytestmark = pytest.mark.django_db(transaction=True)
LONG = "Explain the lexer, the parser and how errors are recovered, in detail please. " * 6
DETECTOR = '{"boundary_index": null, "confidence": 0}'


def trigger(tokens: int):
    return override_settings(
        ACDC_COMPACTION_TRIGGER_TOKENS=tokens,
        ACDC_VERBATIM_WINDOW_TOKENS=150,
        ACDC_SMALLER_MODEL="acdc/fake",
        ACDC_CHECKPOINT_EVERY=0,
    )


async def chat(ws, n: int) -> list[str]:
    """One turn answered by the fake's echo (so no scripted step is consumed out of turn)."""
    await send(ws, message=f"{n} {LONG}")
    return await frames_until(ws, 'data-status="complete"')


@database_sync_to_async
def user_texts(session) -> list[str]:
    return list(
        Message.objects.filter(session=session, role="user").values_list("content", flat=True)
    )


@trigger(400)
async def test_a_reply_past_the_trigger_is_followed_by_a_visible_compaction(fake):
    session = await new_session()
    ws = await connect(session.id)
    fake.enqueue(FakeStep(text="They went over the lexer.", purpose="history_summary"))
    seen: list[str] = []
    # Only frames are read here: the next message waits for the after-reply work, so a
    # compaction's frames arrive before the next reply's (and no test query races it).
    for n in range(8):
        seen += await chat(ws, n)
        if any('data-state="complete"' in frame for frame in seen):
            break
    done = next(frame for frame in seen if 'data-state="complete"' in frame)
    assert "History compacted (summarized)" in done and 'id="conversation"' in done
    assert "The summary the model now sees" in done and "earlier messages compacted" in done
    assert 'id="session-tools"' in done  # refreshed: Undo compaction appears
    await ws.disconnect()


@trigger(100_000)
async def test_slash_compact_with_a_focus_steers_the_summary(fake):
    session = await new_session()
    ws = await connect(session.id)
    for n in range(5):
        await chat(ws, n)
    fake.enqueue(FakeStep(text=DETECTOR), "Focused summary.")
    await send(ws, action="send", message="/compact   the parser decisions")
    frames = await frames_until(ws, 'data-state="complete"')
    assert "Focused summary." in frames[-1]
    summarizer = fake.requests[-1].messages[0]["content"]
    assert "Pay particular attention to: the parser decisions" in summarizer
    record = await database_sync_to_async(Compaction.objects.get)(session=session)
    assert record.focus == "the parser decisions"
    assert not any(text.startswith("/compact") for text in await user_texts(session))
    await ws.disconnect()


@trigger(100_000)
async def test_compact_now_with_too_little_history_says_so(fake):
    session = await new_session()
    ws = await connect(session.id)
    await chat(ws, 0)
    await send(ws, action="compact")
    frames = await frames_until(ws, 'data-state="none"')
    assert "Nothing to compact" in frames[-1]
    await ws.disconnect()


@trigger(100_000)
async def test_a_message_sent_while_compacting_waits_and_then_runs(fake):
    session = await new_session()
    ws = await connect(session.id)
    for n in range(5):
        await chat(ws, n)
    slow_summary = FakeStep(text="Slow summary.", chunk_delay=0.3)
    fake.enqueue(FakeStep(text=DETECTOR), slow_summary, FakeStep(text="after compaction"))
    await send(ws, action="compact")
    await send(ws, message="next question")  # arrives while the summary is being written
    frames = await frames_until(ws, "after compaction")
    text = "".join(frames)
    assert text.index('data-state="complete"') < text.index("after compaction")
    assert "still streaming" not in text
    assert "Slow summary." in json.dumps(fake.requests[-1].messages)
    await ws.disconnect()


@trigger(100_000)
async def test_compact_now_with_the_dry_run_says_what_it_would_send_and_changes_nothing(fake):
    session = await new_session()
    ws = await connect(session.id)
    for n in range(5):
        await chat(ws, n)
    with override_settings(ACDC_SMALLER_MODEL="acdc/dry-run"):
        await send(ws, action="compact")
        frames = await frames_until(ws, 'data-state="none"')
    assert "Dry run: compaction would send" in frames[-1] and "nothing was changed" in frames[-1]
    assert not await database_sync_to_async(Compaction.objects.filter(session=session).exists)()
    await ws.disconnect()


@trigger(100_000)
async def test_compact_now_with_an_unscripted_fake_stores_no_summary(fake):
    session = await new_session()
    ws = await connect(session.id)
    for n in range(5):
        await chat(ws, n)
    fake.enqueue(FakeStep(text=DETECTOR, purpose="topic_detection"))
    await send(ws, action="compact")
    frames = await frames_until(ws, 'data-state="none"')
    assert "acdc/fake is an offline model: it writes no summary" in frames[-1]
    assert not await database_sync_to_async(Compaction.objects.filter(session=session).exists)()
    await ws.disconnect()


@trigger(100_000)
async def test_a_summary_that_repeats_an_old_reply_says_nothing_was_compacted_until_next_turn(
    fake,
):
    session = await new_session()
    ws = await connect(session.id)
    for n in range(5):
        await chat(ws, n)
    old_reply = echo_reply([{"role": "user", "content": f"1 {LONG}"}])
    fake.enqueue(
        FakeStep(text=DETECTOR, purpose="topic_detection"),
        FakeStep(text=old_reply[:300] + " ...", purpose="history_summary"),  # a cut copy
    )
    await send(ws, action="compact")
    frames = await frames_until(ws, 'data-state="none"')
    assert "The summary could not be made" in frames[-1], frames[-1]
    assert "nothing was compacted: the model still sees the whole history" in frames[-1]
    assert "The summary the model now sees" not in "".join(frames)
    assert not await database_sync_to_async(Compaction.objects.filter(session=session).exists)()
    started = next(frame for frame in await chat(ws, 5) if 'id="compaction-status"' in frame)
    status = started[started.index('<div id="compaction-status"') :].split("</div>", 1)[0]
    assert 'data-state="idle"' in status and "could not be made" not in status, status
    await ws.disconnect()
