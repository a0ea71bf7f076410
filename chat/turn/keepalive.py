"""Keep-alive refreshes of a session's cached prefix while the person is away.

Under explicit breakpoints (Anthropic, and the offline models, which imitate it) a cached
prefix lives five minutes or an hour from its last use, and a request that reads it renews
it. The cache policy says when a refresh is worth its read (`ContextManager.refresh_plan`);
this module sends one: the chat's cached prefix with a note asking for a one-token answer,
to the session's model, recorded as usage like any request, so the HUD, History and the
token calibration see it. A refresh is claimed under the session's lease before it is
sent, so two tabs or workers never send the same one and a turn that started meanwhile
wins. When to call is the web layer's business (`chat.web.keepwarm`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from channels.db import database_sync_to_async

from chat.llm.runtime import llm_client
from chat.turn import endless, hud
from chat.turn.context import hud_of
from chat.turn.session import (
    SessionBusy,
    SessionContext,
    SessionMissing,
    held,
    live_turn,
)
from contextcore.llm import LLMError, LLMRequest, Usage, UsageReport
from contextcore.models import ModelFacts
from history import services

log = logging.getLogger(__name__)

PURPOSE = "keepalive"  # the request's metadata purpose; the offline models answer it with "."
TURN_ID = "keepalive"  # how its usage rows are told apart from turns
EARLY = 1.0  # seconds before its time a refresh is still sent (a timer may wake early)


@dataclass(frozen=True)
class Refresh:
    at: float
    count: int  # refreshes since the last request, this one included
    usage: Usage | None
    cost: float | None
    hud: dict[str, Any]


@dataclass(frozen=True)
class _Claim:
    model: str
    messages: list
    facts: ModelFacts
    estimated: int
    count: int


def next_refresh(session_id: str) -> float | None:
    """When the session's next refresh is due (wall-clock seconds), or None."""
    try:
        ctx = SessionContext.open(session_id)
    except SessionMissing:
        return None
    if live_turn(ctx.session):
        return None
    plan = _plan(ctx)
    return plan[0] if plan else None


def _plan(ctx: SessionContext) -> tuple[float, ...]:
    # Endless mode sends a managed view, not the working history the refresh would
    # repeat: a refresh would write a prefix no turn reads.
    if endless.endless_state(ctx.session)["enabled"]:
        return ()
    return ctx.manager.refresh_plan()


async def refresh(session_id: str, now: float) -> Refresh | None:
    """Send the refresh due at `now`, if it still is; None when nothing was sent (a turn
    holds the session, another tab sent it, the prefix already expired) or it failed."""
    claim = await database_sync_to_async(_claim)(session_id, now)
    if claim is None:
        return None
    request = LLMRequest(claim.model, claim.messages, max_tokens=1, metadata={"purpose": PURPOSE})
    usage = None
    try:
        async for event in llm_client().stream(request):
            if isinstance(event, UsageReport):
                usage = event.usage
    except LLMError as exc:
        # The next turn finds the cache as it is: at worst it writes the prefix again.
        log.warning("keep-alive refresh of session %s failed: %s", session_id, exc)
        return None
    return await database_sync_to_async(_record)(session_id, now, claim, usage)


def _claim(session_id: str, now: float) -> _Claim | None:
    try:
        with held(session_id) as owner:
            ctx = SessionContext.open(session_id, owner=owner)
            manager = ctx.manager
            plan = _plan(ctx)
            too_late = manager.stability.cache_lost(now, ctx.facts.name)
            if not plan or plan[0] > now + EARLY or too_late:
                return None
            messages = manager.refresh_request()
            if not messages:
                return None
            manager.stability.note_refresh(now)
            ctx.commit()
            count = manager.stability.refreshes
            return _Claim(ctx.model, messages, ctx.facts, manager.counter.count(messages), count)
    except (SessionBusy, SessionMissing):
        return None


def _record(session_id: str, now: float, claim: _Claim, usage: Usage | None) -> Refresh | None:
    cost = hud.cost_of(usage, claim.facts) if usage else None
    billed = usage.as_dict() if usage else {}
    services.token_usage_record(
        session_id=session_id,
        turn_id=TURN_ID,
        model=claim.facts.name,
        sections={},
        tiers={},
        estimated_prompt_tokens=claim.estimated,
        usage=billed,
        cost=cost,
    )
    row = (billed.get("prompt_tokens", 0), billed.get("cache_read_tokens", 0), cost)
    try:
        with held(session_id) as owner:
            ctx = SessionContext.open(session_id, owner=owner)
            data = hud_of(ctx, extra_usage=row)
            ctx.commit(hud=data, usage=row)
    except (SessionBusy, SessionMissing):
        return None
    return Refresh(now, claim.count, usage, cost, data)
