"""After a turn: the due checkpoint, then compaction, reported as events the page renders."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from django.test import override_settings

from chat.live.served import served
from chat.llm.fake import FakeStep
from chat.session import SessionContext
from chat.turn import after_turn
from chat.turn.turns import TurnInput, TurnServices, run_turn
from chat.web.conversation import render_session_event
from history.models import Checkpoint
from tests.chat.sockets import new_session

pytestmark = pytest.mark.django_db(transaction=True)
LONG = "Explain the lexer, the parser and how errors are recovered in detail. " * 6


async def ignore(event) -> None:
    return None


async def opened(session) -> SessionContext:
    """The session's context, opened afresh (the after-turn work is handed a context)."""
    return await database_sync_to_async(SessionContext.open)(session.id, served())


async def talk(session, fake, turns: int) -> None:
    for n in range(turns):
        fake.enqueue(FakeStep(text=f"answer {n}"))
        await run_turn(
            TurnInput(session_id=session.id, user_text=f"{n} {LONG}"),
            TurnServices(emit=ignore, wiring=served()),
        )


@override_settings(
    ACDC_COMPACTION_TRIGGER_TOKENS=400,
    ACDC_VERBATIM_WINDOW_TOKENS=150,
    ACDC_SMALLER_MODEL="acdc/fake",
    ACDC_CHECKPOINT_EVERY=3,
)
async def test_past_the_trigger_the_history_is_compacted_and_the_page_told(fake, monkeypatch):
    monkeypatch.setattr(after_turn, "START_DELAY", 0)  # announce at once
    session = await new_session()
    await talk(session, fake, 6)
    fake.enqueue(FakeStep(text='{"boundary_index": null, "confidence": 0}'), "Short summary.")
    frames: list[str] = []

    async def send(event) -> None:
        frames.append(await database_sync_to_async(render_session_event)(event))

    outcome = await after_turn.after_turn_tasks(await opened(session), send)

    assert outcome is not None and outcome.case == "summarize"
    assert 'data-state="start"' in frames[0] and "Compacting the history" in frames[0]
    assert 'id="conversation"' in frames[-1] and 'hx-swap-oob="outerHTML"' in frames[-1]
    assert 'data-state="complete"' in frames[-1] and "History compacted" in frames[-1]
    assert "earlier messages compacted" in frames[-1]
    assert 'id="hud"' in frames[-1]  # the HUD shows the smaller history at once
    kinds = await database_sync_to_async(
        lambda: sorted(
            Checkpoint.objects.filter(session_id=session.id).values_list("kind", flat=True)
        )
    )()
    assert kinds == ["auto", "compaction"]  # after 6 turns (every 3), and before compacting


async def test_below_the_trigger_nothing_is_announced(fake):
    session = await new_session()
    await talk(session, fake, 1)
    frames: list[str] = []

    async def send(event) -> None:
        frames.append(await database_sync_to_async(render_session_event)(event))

    assert await after_turn.after_turn_tasks(await opened(session), send) is None
    assert frames == []


async def test_compact_now_on_an_empty_session_is_a_clear_error():
    session = await new_session()
    frames: list[str] = []

    async def send(event) -> None:
        frames.append(await database_sync_to_async(render_session_event)(event))

    assert await after_turn.run_compaction(session.id, send, wiring=served(), force=True) is None
    assert 'data-state="error"' in frames[-1] and "no conversation to compact" in frames[-1]


@database_sync_to_async
def pile_up_summaries(session, count: int) -> None:
    """Summaries that change nothing (each keeps the history as it is), stored as the
    compaction service stores them: under the lease, the header told."""
    from chat.session import held
    from chat.session.working import as_refs
    from history.models import Compaction

    with held(session.id) as owner:
        ctx = SessionContext.open(session.id, served(), owner=owner)
        history = ctx.manager.get_history()
        for _ in range(count):
            ctx.compactions.append(
                Compaction.objects.create(
                    session_id=session.id,
                    case="summarize",
                    after=as_refs(history, history),
                    upto_seq=ctx.last_seq,
                )
            )
        ctx.commit()


@pytest.mark.parametrize("enabled", [True, False])
async def test_automatic_rollback_only_when_enabled_and_asked_for(fake, enabled):
    from chat.session import checkpoints
    from history.models import Message, Session

    session = await new_session()
    await talk(session, fake, 1)
    stored = await database_sync_to_async(Session.objects.get)(pk=session.id)
    await database_sync_to_async(checkpoints.take)(stored, label="good")
    await pile_up_summaries(session, 4)  # four summaries in two turns: the score asks
    await talk(session, fake, 1)
    hud = (await database_sync_to_async(Session.objects.get)(pk=session.id)).context_state["hud"]
    assert hud["quality"]["action"] == "rollback"
    frames: list[str] = []

    async def send(event) -> None:
        frames.append(await database_sync_to_async(render_session_event)(event))

    with override_settings(ACDC_AUTO_ROLLBACK=enabled, ACDC_CHECKPOINT_EVERY=0):
        await after_turn.after_turn_tasks(await opened(session), send)

    rolled = await database_sync_to_async(
        lambda: Message.objects.filter(session_id=session.id, rolled_back=True).count()
    )()
    if enabled:
        assert rolled == 2 and "Automatic: Rolled back" in frames[-1]
    else:
        assert rolled == 0 and frames == []
