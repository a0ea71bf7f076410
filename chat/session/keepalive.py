"""Keep-alive refreshes of a session's cached prefix while the person is away.

Under explicit breakpoints (Anthropic, and the offline models, which imitate it) a cached
prefix lives five minutes or an hour from its last use, and a request that reads it renews
it. The cache policy says when a refresh is worth its read (`ContextManager.refresh_plan`);
this module sends one: the chat's request (its tools and cached prefix) plus a note asking
for a one-token answer, recorded as usage like any request, so the HUD, History and the
token calibration see it. It counts as useful only when the provider reports at least 95%
of the prefix the session's last request cached read again; one that reads less (it wrote
a new entry instead of renewing the chat's) stops the session's refreshes
(`contextcore.prompt.refreshledger`) and the status line says so. A refresh is claimed
under the session's lease before it is sent, so two tabs or workers never send the same
one and a turn that started meanwhile wins. When to call is `chat.live.keepwarm`'s business.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from channels.db import database_sync_to_async

from chat.llm.runtime import Runtime, chat_model
from chat.session import (
    SessionBusy,
    SessionContext,
    SessionMissing,
    Wiring,
    endless,
    held,
    hud,
    live_turn,
    outgoing,
)
from chat.session.codec import context_config
from contextcore.conversation.topics import log_ignored_tool_call
from contextcore.llm import LLMError, LLMRequest, ToolCallDelta, Usage, UsageReport
from contextcore.models import ModelFacts
from contextcore.prompt.cacherules import rules_for
from contextcore.prompt.siderequest import REFRESH_PURPOSE, refresh_request
from contextcore.prompt.stability import StabilityTracker
from history import services
from history.models import Session, TokenUsage

log = logging.getLogger(__name__)
T = TypeVar("T")

PURPOSE = REFRESH_PURPOSE  # the request's metadata purpose; the offline models answer "."
TURN_ID = "keepalive"  # how its usage rows are told apart from turns
EARLY = 1.0  # seconds before its time a refresh is still sent (a timer may wake early)


@dataclass(frozen=True)
class Refresh:
    count: int  # refreshes since the last request, this one included
    usage: Usage | None
    cost: float | None
    hud: dict[str, Any]
    useful: bool = True  # the provider reported the prefix read (`RefreshLedger`)
    stopped: str = ""  # why the session sends no more refreshes


@dataclass(frozen=True)
class _Claim:
    request: LLMRequest
    facts: ModelFacts
    estimated: int
    count: int


def next_refresh(session_id: str, runtime: Runtime) -> float | None:
    """When the session's next refresh is due (wall-clock seconds), or None. Asked on every
    tab's connect, so it reads the session row's header alone, not the whole context."""
    session = Session.objects.filter(pk=session_id).first()
    if session is None or live_turn(session) or _endless(session):
        return None
    if not context_config(repository="").keeps_warm:  # its rule alone, no prompt read
        return None
    engine = (session.context_state or {}).get("engine") or {}
    tracker = StabilityTracker.from_state(engine.get("stability") or {})
    facts, _ = runtime.facts(chat_model(session.model))
    plan = tracker.refresh_plan(rules_for(facts))
    return plan[0] if plan else None


def _endless(session: Session) -> bool:
    # Endless mode sends a managed view, not the working history the refresh would
    # repeat: a refresh would write a prefix no turn reads.
    return endless.endless_state(session)["enabled"]


async def refresh(session_id: str, now: float, wiring: Wiring) -> Refresh | None:
    """Send the refresh due at `now`, if it still is; None when nothing was sent (a turn
    holds the session, another tab sent it, the prefix already expired) or it failed."""
    runtime = wiring.runtime
    claim = await database_sync_to_async(_claim)(session_id, now, wiring)
    if claim is None:
        return None
    usage = None
    try:
        async for event in outgoing.client(runtime.client).stream(claim.request):
            if isinstance(event, UsageReport):
                usage = event.usage
            elif isinstance(event, ToolCallDelta) and event.name:
                log_ignored_tool_call(claim.request, event.name)
    except LLMError as exc:
        # The next turn finds the cache as it is: at worst it writes the prefix again.
        log.warning("keep-alive refresh of session %s failed: %s", session_id, exc)
        return None
    return await database_sync_to_async(_record)(session_id, claim, usage, wiring)


def _leased(session_id: str, work: Callable[[SessionContext], T], wiring: Wiring) -> T | None:
    """`work` on the session's context under its lease; None when a turn holds it or the
    session is gone."""
    try:
        with held(session_id) as owner:
            return work(SessionContext.open(session_id, wiring, owner=owner))
    except (SessionBusy, SessionMissing):
        return None


def _claim(session_id: str, now: float, wiring: Wiring) -> _Claim | None:
    def claim(ctx: SessionContext) -> _Claim | None:
        manager = ctx.manager
        plan = () if _endless(ctx.session) else manager.refresh_plan()
        too_late = manager.stability.cache_lost(now, ctx.facts.name)
        if not plan or plan[0] > now + EARLY or too_late:
            return None
        request = refresh_request(manager.side_prefix(ctx.tools), ctx.model)
        if request is None:
            return None
        manager.stability.note_refresh(now)
        ctx.commit()
        estimated = manager.counter.count(request.messages) + ctx.facts.tool_tokens
        return _Claim(request, ctx.facts, estimated, manager.stability.refreshes)

    return _leased(session_id, claim, wiring)


def _record(session_id: str, claim: _Claim, usage: Usage | None, wiring: Wiring) -> Refresh | None:
    cost = hud.cost_of(usage, claim.facts) if usage else None
    billed = usage.as_dict() if usage else {}
    cached = _cached_before(session_id)
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

    def commit_hud(ctx: SessionContext) -> tuple[dict[str, Any], bool, str]:
        ledger = ctx.manager.stability.ledger
        useful = ledger.record(
            prefix_tokens=cached,
            read_tokens=row[1],
            cost=cost or 0.0,
            saving_per_token=_saving_per_token(claim.facts),
        )
        if not useful:
            log.warning("keep-alive stopped for session %s: %s", session_id, ledger.stopped)
        data = hud.figures(ctx, extra_usage=row)
        ctx.commit(hud=data, usage=row)
        return data, useful, ledger.stopped

    done = _leased(session_id, commit_hud, wiring)
    if done is None:
        return None
    data, useful, stopped = done
    return Refresh(claim.count, usage, cost, data, useful, stopped)


def _cached_before(session_id: str) -> int:
    """What the session's last request (a turn or a refresh) left in the provider's cache,
    as the provider reported it: the prefix it read plus what it wrote after it."""
    last = (
        TokenUsage.objects.filter(session_id=session_id)
        .order_by("-created_at", "-id")
        .values_list("cache_read_tokens", "cache_write_tokens")
        .first()
    )
    return sum(last) if last else 0


def _saving_per_token(facts: ModelFacts) -> float:
    """What reading a cached token saves against writing it again, in dollars."""
    write = facts.cache_write_cost_per_token or facts.input_cost_per_token
    return write - (facts.cache_read_cost_per_token or facts.input_cost_per_token)
