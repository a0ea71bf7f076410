"""What runs after a turn has been delivered: the due checkpoint, then compaction.

The turn's end (`chat.turn.afterreply.AfterReply`, the page's and the CLI's alike) calls
`after_turn_tasks` once the answer is stored and shown, as part of the session's turn task,
so the next message waits until it is done. Progress
is reported as events (`CompactionStarted`, `CompactionEnded`) that each surface shows its
own way. "Compacting…" is reported only if compaction runs longer than `START_DELAY` (no
flicker for quick ones); the end is always reported. Any failure here is reported and
logged, never raised: the turn is already safe in the store.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from channels.db import database_sync_to_async
from django.conf import settings

from chat.repo import edittools
from chat.repo.edits import replies
from chat.session import SessionContext, Wiring, checkpoints
from chat.session.compaction import CompactionOutcome, CompactionRefused, compact_session
from chat.session.setchanges import refresh_sets
from chat.turn.events import CompactionEnded, CompactionStarted, SessionEvent
from history.models import Session

log = logging.getLogger(__name__)
START_DELAY = 0.5
Report = Callable[[SessionEvent], Awaitable[None]]


async def after_turn_tasks(
    ctx: SessionContext, report: Report, *, start_delay: float | None = None
) -> CompactionOutcome | None:
    """The checkpoint if one is due, then compaction when the history passed its trigger;
    otherwise the opt-in automatic rollback when the quality score asks for one. Works
    from the turn's own context: nothing is loaded again unless there is work to do. A
    terminal has no flicker to avoid: the CLI passes `start_delay=0`."""
    session_id = ctx.session_id
    if edittools.enabled() and _may_have_edits(ctx):  # its blocks become pending edits
        await _reply_edits(ctx)
    try:
        await database_sync_to_async(checkpoints.take_if_due)(ctx)
        due = ctx.manager.should_compact()
    except Exception:
        log.exception("after-turn checks failed in %s", session_id)
        return None
    if due:
        return await run_compaction(
            session_id, report, wiring=ctx, quiet=True, start_delay=start_delay, ctx=ctx
        )
    if settings.ACDC_AUTO_ROLLBACK:
        await _auto_rollback(session_id, report, ctx)
    return None


def _may_have_edits(ctx: SessionContext) -> bool:
    """A turn knows whether it called an edit tool and whether its answer may hold a
    block: without either there are no rows to bind nor blocks to read (no statement is
    spent). A context opened afresh knows neither, and the rows are read."""
    if ctx.reply_text is None:
        return True
    return ctx.edit_calls > 0 or replies.may_hold_blocks(ctx.reply_text)


async def _reply_edits(ctx: SessionContext) -> None:
    try:
        await database_sync_to_async(replies.after_turn)(
            ctx.session, ctx.repository.indexed(), ctx.apply_now
        )
    except Exception:
        log.exception("the reply's edits could not be stored in %s", ctx.session_id)


async def _auto_rollback(session_id: str, report: Report, wiring: Wiring) -> None:
    """Go back to the newest checkpoint taken before the summaries piled up."""
    note = await database_sync_to_async(_rollback_if_asked)(session_id, wiring)
    if note:
        await report(CompactionEnded(session_id, "complete", f"Automatic: {note}", rerender=True))


def _rollback_if_asked(session_id: str, wiring: Wiring) -> str:
    session = Session.objects.get(pk=session_id)
    quality = ((session.context_state or {}).get("hud") or {}).get("quality") or {}
    if quality.get("action") != "rollback":
        return ""
    target = session.checkpoints.exclude(label="Before rollback").order_by("-id").first()
    if target is None:
        return ""
    try:
        note = checkpoints.rollback(session_id, target.id, repo=wiring.repository.indexed())
    except checkpoints.RollbackRefused as exc:
        log.warning("automatic rollback refused in %s: %s", session_id, exc)
        return ""
    refresh_sets(session_id, wiring)  # the saved HUD follows the history rolled back to
    return note


async def run_compaction(
    session_id: str,
    report: Report,
    *,
    wiring: Wiring,
    focus: str = "",
    force: bool = False,
    quiet: bool = False,
    start_delay: float | None = None,
    ctx: SessionContext | None = None,
) -> CompactionOutcome | None:
    """Compact, reporting start (after START_DELAY) and end: complete, error or none. A
    compaction that changes nothing ends silently when `quiet` (the automatic one), and
    says why otherwise (Compact now)."""

    async def announce() -> None:
        await asyncio.sleep(START_DELAY if start_delay is None else start_delay)
        await report(CompactionStarted(session_id))

    herald = asyncio.create_task(announce())

    async def finish(state: str, text: str, **more) -> None:
        herald.cancel()
        await report(CompactionEnded(session_id, state, text, **more))

    try:
        outcome = await compact_session(session_id, wiring, focus=focus, force=force, ctx=ctx)
    except CompactionRefused as exc:
        await finish("error", str(exc))
        return None
    except asyncio.CancelledError:
        await asyncio.shield(finish("none", "Compaction stopped; the history is unchanged."))
        raise
    except Exception:
        log.exception("compaction failed in %s", session_id)
        await finish("error", "Compaction failed; the history is unchanged.")
        return None
    if not outcome.changed:
        await finish("none", "" if quiet else outcome.note, outcome=outcome)
        return outcome
    hud = outcome.hud  # saved with the compacted history, from the same context
    if hud is None:
        hud = await database_sync_to_async(refresh_sets)(session_id, wiring)
    await finish("complete", outcome.note, outcome=outcome, rerender=True, hud=hud)
    return outcome
