"""What runs after a turn has been delivered: the due checkpoint, then compaction.

The consumer (and the CLI) call `after_turn_tasks` once the answer is stored and shown,
as part of the session's turn task, so the next message waits until it is done. The
"Compacting…" state is announced only if compaction runs longer than `START_DELAY`
(no flicker for quick ones); the end is always announced: complete (with the conversation
re-rendered from the compacted history) or error. Any failure here is reported and
logged, never raised: the turn is already safe in the store.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from channels.db import database_sync_to_async
from django.conf import settings
from django.template.loader import render_to_string

from chat.turn import checkpoints
from chat.turn.compaction import (
    CompactionOutcome,
    CompactionRefused,
    compact_session,
    needs_compaction,
)
from chat.turn.context import refresh_sets
from chat.web.conversation import render_conversation
from chat.web.frames import render_hud
from history.models import Session

log = logging.getLogger(__name__)
START_DELAY = 0.5
Send = Callable[[str], Awaitable[None]]


async def after_turn_tasks(session_id: str, send: Send) -> CompactionOutcome | None:
    """The checkpoint if one is due, then compaction when the history passed its trigger."""
    try:
        await database_sync_to_async(checkpoints.take_if_due)(session_id)
        due = await database_sync_to_async(needs_compaction)(session_id)
    except Exception:
        log.exception("after-turn checks failed in %s", session_id)
        return None
    if due:
        return await run_compaction(session_id, send, quiet=True)
    if settings.ACDC_AUTO_ROLLBACK:
        await _auto_rollback(session_id, send)
    return None


async def _auto_rollback(session_id: str, send: Send) -> None:
    """Opt-in (ACDC_AUTO_ROLLBACK): when the quality score asks for a rollback, go back to
    the newest checkpoint taken before the summaries piled up, and show the result."""
    session = await database_sync_to_async(Session.objects.get)(pk=session_id)
    quality = ((session.context_state or {}).get("hud") or {}).get("quality") or {}
    if quality.get("action") != "rollback":
        return
    target = await database_sync_to_async(
        lambda: session.checkpoints.exclude(label="Before rollback").order_by("-id").first()
    )()
    if target is None:
        return
    try:
        note = await database_sync_to_async(checkpoints.rollback)(session_id, target.id)
    except checkpoints.RollbackRefused as exc:
        log.warning("automatic rollback refused in %s: %s", session_id, exc)
        return
    session = await database_sync_to_async(Session.objects.get)(pk=session_id)
    conversation = await database_sync_to_async(render_conversation)(session, oob=True)
    context = {"state": "complete", "text": f"Automatic: {note}", "session_id": session_id}
    await send(conversation + render_to_string("chat/_frame_compaction.html", context))


async def run_compaction(
    session_id: str, send: Send, *, focus: str = "", force: bool = False, quiet: bool = False
) -> CompactionOutcome | None:
    """Compact with websocket events: start (after START_DELAY), complete or error. A
    compaction that changes nothing clears the status silently when `quiet` (the automatic
    one), and says why otherwise (Compact now)."""

    async def announce() -> None:
        await asyncio.sleep(START_DELAY)
        await send(render_to_string("chat/_frame_compaction.html", {"state": "start"}))

    herald = asyncio.create_task(announce())
    try:
        outcome = await compact_session(session_id, focus=focus, force=force)
    except CompactionRefused as exc:
        await _finish(send, herald, session_id, "error", str(exc))
        return None
    except asyncio.CancelledError:
        stopped = "Compaction stopped; the history is unchanged."
        await asyncio.shield(_finish(send, herald, session_id, "none", stopped))
        raise
    except Exception:
        log.exception("compaction failed in %s", session_id)
        await _finish(
            send, herald, session_id, "error", "Compaction failed; the history is unchanged."
        )
        return None
    if not outcome.changed:
        await _finish(send, herald, session_id, "none", "" if quiet else outcome.note)
        return outcome
    session = await database_sync_to_async(Session.objects.get)(pk=session_id)
    conversation = await database_sync_to_async(render_conversation)(session, oob=True)
    hud = await database_sync_to_async(refresh_sets)(session_id)  # the HUD follows
    conversation += render_hud(hud)
    await _finish(send, herald, session_id, "complete", outcome.note, outcome, conversation)
    return outcome


async def _finish(
    send: Send,
    herald: asyncio.Task,
    session_id: str,
    state: str,
    text: str,
    outcome: CompactionOutcome | None = None,
    conversation: str = "",
) -> None:
    herald.cancel()
    context = {"state": state, "text": text, "outcome": outcome, "session_id": session_id}
    await send(conversation + render_to_string("chat/_frame_compaction.html", context))
