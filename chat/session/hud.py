"""The context HUD's figures: budget by section, cache tiers, cache hits, cost, trend.

Computed on the server after every turn (and saved with the session, so a reload shows
the last state); the template draws the bar and the sparkline as plain HTML and SVG.
After a turn the figures are the breakdown its own request's assembly made, with the
exchange now in the history: nothing is assembled again for the HUD. Outside a turn (the
selection changed) one preview is assembled.
The budget is one figure, the facts' `input_budget` (`chat.session.setup`: the
window less the reply's reserve and the tool definitions): the HUD and the Files panel
both show it, and over it both name the files that sending would shed.
A request's prompt tokens are one number everywhere: the provider's reported usage, else
acdc's count of what was sent (`chat.turn.sending`); the panel shows the last request's
and counts every request the session's turns sent (tool rounds and retries too), kept as
running totals in the saved figures, beside the turns.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.db.models import Count, Sum

from chat.llm.facts import DRY_RUN_MODEL, OFFLINE_MODELS
from chat.llm.runtime import Runtime
from chat.session import SessionContext, setup, suggesting
from contextcore import calibration
from contextcore.conversation.artifacts import lines_of
from contextcore.llm import Usage
from contextcore.manager import ContextManager
from contextcore.models import ModelFacts
from contextcore.objectview import is_active_label
from contextcore.quality import score_quality
from history.models import Compaction, TokenUsage

SECTION_LABELS = {
    "system": "System prompt",
    "instructions": "Instructions",
    "repo_map": "Repository map",
    "reference_files": "Reference files",
    "active_files": "Active files",
    "metadata": "Metadata",
    "trail": "Artifact trail",
    "suggested": "Suggested for this message",
    "history": "History",
    "current_message": "Current message",
}
TIER_ORDER = ("L0", "L1", "L2", "L3", "cached", "active")
SPARK_TURNS = 30
COMPACTION_CASES = (Compaction.Case.TRUNCATE, Compaction.Case.SUMMARIZE)  # not engine rewrites


def request_facts(model: str, runtime: Runtime) -> tuple[ModelFacts, str | None]:
    """The model's facts as its requests meet them, and a warning: for a page that shows
    the budget of a session it has no context of."""
    return setup.request_setup(runtime, model)[:2]


def figures(
    ctx: SessionContext,
    extra_usage: tuple | None = None,
    *,
    requests: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """The HUD figures from what the context already holds (no query when it can): the
    breakdown of the turn's request when it made one, else a preview. `extra_usage` is a
    usage row just recorded; `requests`, after a turn, how many requests it sent and the
    last one's prompt tokens."""
    extra = [list(extra_usage)] if extra_usage else []
    known = "usage_tail" in ctx.header  # else the stored rows, the newest among them
    usage = [*ctx.usage_tail(), *extra] if known else usage_rows(ctx.session_id)
    data = hud_data(
        ctx.session_id,
        ctx.manager.facts,
        ctx.manager,
        ctx.relevance,
        breakdown=ctx.breakdown,
        usage=usage,
        turns=ctx.user_turns,
        compactions=sum(c.case in COMPACTION_CASES for c in ctx.compactions),
        suggesting_on=suggesting.enabled(ctx.session),
    )
    return {**data, **request_totals(ctx, extra_usage, requests)}


def request_totals(
    ctx: SessionContext, extra_usage: tuple | None, requests: tuple[int, int] | None
) -> dict[str, Any]:
    """The running totals the panel shows: the requests the session's turns sent, the
    last one's prompt tokens, the cost of every recorded request; carried from the saved
    figures (counted from the stored rows once, for figures saved before they were kept)."""
    saved = ctx.hud()
    if "requests" not in saved:
        saved = {**saved, **stored_totals(ctx.session_id, extra_usage)}
    elif extra_usage and extra_usage[2] is not None:
        saved["cost_in_all"] = (saved.get("cost_in_all") or 0.0) + extra_usage[2]
    if requests is not None and requests[0]:
        saved["requests"] += requests[0]
        saved["last_prompt"] = requests[1]
    return {
        "requests": saved["requests"],
        "last_prompt": saved.get("last_prompt"),
        "cost_in_all": saved.get("cost_in_all"),
        "user_turns": ctx.user_turns,
    }


def stored_totals(session_id: str, extra_usage: tuple | None) -> dict[str, Any]:
    """The totals from the stored usage rows (one per turn or refresh; the row just
    recorded among them): a turn's rounds were not counted apart before."""
    rows = TokenUsage.objects.filter(session_id=session_id)
    found = rows.aggregate(n=Count("id"), cost=Sum("cost"))
    newest = rows.order_by("-created_at", "-id").values_list("prompt_tokens", flat=True).first()
    counted = found["n"] - (1 if extra_usage else 0)
    return {"requests": counted, "last_prompt": newest, "cost_in_all": found["cost"]}


def usage_rows(session_id: str) -> list[list]:
    """The session's newest usage rows ([prompt, cache read, cost], oldest first), for a
    context whose header does not hold them yet."""
    rows = TokenUsage.objects.filter(session_id=session_id).order_by("-created_at", "-id")
    newest = rows.values_list("prompt_tokens", "cache_read_tokens", "cost")[:SPARK_TURNS]
    return [list(row) for row in reversed(list(newest))]


def unbilled(facts: ModelFacts) -> str:
    """Why the HUD shows no cost ("" when the model has prices): $0.0000 would read as a
    price of nothing rather than as no bill at all."""
    if facts.input_cost_per_token or facts.output_cost_per_token:
        return ""
    if facts.name == DRY_RUN_MODEL:
        return "no cost (dry run)"
    if facts.name in OFFLINE_MODELS:
        return "no cost (offline model)"
    return "cost unknown (no prices for this model)"


def calibrated_budget(facts: ModelFacts) -> dict[str, Any] | None:
    """How far the budget shown moved because acdc's counts were calibrated against the
    provider's reported usage (`contextcore.calibration`); None when they were not."""
    plain = replace(facts, token_factor=1.0).input_budget
    return calibration.shift(facts.token_factor, facts.input_budget, plain)


def level_for(percent: float) -> str:
    return "green" if percent <= 75 else "amber" if percent <= 90 else "red"


def cost_of(usage: Usage, facts: ModelFacts) -> float | None:
    if not (facts.input_cost_per_token or facts.output_cost_per_token):
        return None
    read, write = usage.cache_read_tokens, usage.cache_write_tokens
    plain = max(0, usage.prompt_tokens - read - write)
    return (
        plain * facts.input_cost_per_token
        + read * (facts.cache_read_cost_per_token or facts.input_cost_per_token)
        + write * (facts.cache_write_cost_per_token or facts.input_cost_per_token)
        + usage.completion_tokens * facts.output_cost_per_token
    )


def hud_data(
    session_id: str,
    facts: ModelFacts,
    manager: ContextManager,
    grounding_relevance: float | None = None,
    *,
    breakdown: dict[str, Any] | None = None,
    usage: list[list],
    turns: int,
    compactions: int,
    suggesting_on: bool = True,
) -> dict[str, Any]:
    """The HUD's figures from `breakdown`, the one a request's assembly made (sections,
    tiers, breakpoints); without one, from a preview of the next request. The message the
    request carried is part of the history now: the history counts as the engine holds it.
    The rows it shows are the caller's: the newest usage rows ([prompt, cache read, cost],
    oldest first), the turn count, the live compactions and whether suggestions are on;
    nothing is queried here."""
    window = facts.input_budget
    history_tokens = manager.history_token_count()
    shed: list[str] | None = None
    if breakdown is None:
        breakdown, shed = preview(manager)
    used = {k: v for k, v in breakdown.get("sections", {}).items() if k != "current_message"}
    used["history"] = history_tokens
    sections = _sections(used, window)
    total = sum(s["tokens"] for s in sections)
    if shed is None:  # the request fitted: only a history grown past the limit sheds
        shed = manager.files_to_shed("") if total > shed_limit(manager) else []
    keys = ("prompt_tokens", "cache_read_tokens", "cost")
    rows = [dict(zip(keys, row, strict=True)) for row in usage[-SPARK_TURNS:]]
    shares = [
        r["cache_read_tokens"] / r["prompt_tokens"] if r["prompt_tokens"] else 0.0 for r in rows
    ]
    last = rows[-1] if rows else None
    percent = 100 * total / window if window else 0.0
    return {
        "model": facts.name,
        "window": window,
        "tool_tokens": facts.tool_tokens,
        "calibration": calibrated_budget(facts),
        "total": total,
        "percent": round(percent, 1),
        "level": "red" if shed else level_for(percent),
        "shed": shed,
        "sections": sections,
        "tiers": _tiers(breakdown.get("tiers", {})),
        "breakpoints": len(breakdown.get("breakpoints", [])),
        "last_hit_share": round(100 * shares[-1]) if shares else None,
        "last_cost": last["cost"] if last else None,
        "session_cost": sum(r["cost"] or 0 for r in rows) if rows else None,
        "unbilled": unbilled(facts),
        "spark": sparkline_points(shares),
        "turns": len(rows),
        "refreshes": _refreshes(manager),
        **_hud_compaction(manager, history_tokens),
        "files": sum(not is_active_label(k) for k in manager.file_context.get_files()),
        "tool_outputs": sum(is_active_label(k) for k in manager.file_context.get_files()),
        "instructions": instructions_summary(session_id, manager),
        "trail": trail_summary(manager, used.get("trail", 0)),
        "suggested": suggesting.summary(
            session_id, manager, used.get("suggested", 0), on=suggesting_on
        ),
        "instructions_mark": manager.instructions.seen,  # the files on disk these figures saw
        "tools_note": setup.mcp_change_note(session_id, sent=bool(rows)),
        "quality": quality(
            session_id,
            facts,
            total,
            grounding_relevance,
            turns=turns,
            compactions=compactions,
            history_tokens=history_tokens,
        ),
    }


def preview(manager: ContextManager) -> tuple[dict[str, Any], list[str]]:
    """The breakdown of the request that would be sent next (one assembly), and the files
    sending it would shed. Over the budget, the sections count everything selected, before
    shedding, so an over-full selection reads as such."""
    breakdown = manager.preview_request("").breakdown
    shed = manager.files_to_shed("")
    if shed:
        breakdown = {**breakdown, "sections": manager.estimate_breakdown("")["sections"]}
    return breakdown, shed


def shed_limit(manager: ContextManager) -> float:
    """Past this many tokens a request may shed files (layer 3 or the hard cap)."""
    facts = manager.facts
    return min(facts.input_budget, manager.config.shed_ratio * facts.estimate_window)


def compaction_status(manager: ContextManager, history: int | None = None) -> dict[str, Any]:
    """Seed 000's compaction status under its own names (`enabled`, `trigger`, `percent`:
    the history's share of the trigger, `ContextManager.get_compaction_status`), and under
    the names the HUD's saved figures and template read (`compaction_on`,
    `compaction_trigger`, `history_percent`, `history_tokens`); `history` is the history's
    tokens when counted already."""
    status = manager.get_compaction_status(history)
    return {
        **status,
        "compaction_on": status["enabled"],
        "compaction_trigger": status["trigger"],
        "history_percent": status["percent"],
    }


def _hud_compaction(manager: ContextManager, history: int) -> dict[str, Any]:
    """The HUD's compaction figures: seed 000's status as `compaction` (the HUD's own
    `percent` is the budget's share), and the names its template reads."""
    status = compaction_status(manager, history)
    seed = {key: status[key] for key in ("enabled", "trigger", "percent")}
    kept = ("compaction_on", "compaction_trigger", "history_percent", "history_tokens")
    return {"compaction": seed, **{key: status[key] for key in kept}}


def trail_summary(manager: ContextManager, tokens: int) -> dict[str, Any] | None:
    """The artifact trail as the request carries it: its lines and tokens (None when the
    request carries none: the history was not cut)."""
    if not (tokens and manager.trail_on and manager.trail):
        return None
    return {"lines": lines_of(manager.trail), "tokens": tokens}


def instructions_summary(session_id: str, manager: ContextManager) -> dict[str, Any] | None:
    """The project instructions as the Context panel lists them: each file sent with its
    tokens (as sent: a capped one counts its cut), those switched off, those refused."""
    found = manager.instructions
    if not (found.files or found.switched_off or found.refused):
        return None
    count = manager.counter.count_text
    return {
        "session_id": session_id,
        "on": not found.switched_off,
        "files": [
            {"name": f.name, "tokens": count(f.text), "capped": f.capped, "full": f.tokens}
            for f in found.files
        ],
        "off": list(found.switched_off),
        "refused": [{"name": name, "reason": reason} for name, reason in found.refused],
    }


def quality(
    session_id: str,
    facts: ModelFacts,
    prompt_tokens: int,
    grounding_relevance: float | None,
    *,
    turns: int,
    compactions: int,
    history_tokens: int | None = None,
) -> dict[str, Any]:
    """Seed 003's heuristic score of the context for the next turn, with a suggestion when
    it is low (compact, fewer files, or roll back) that the HUD turns into a button."""
    score = score_quality(
        prompt_tokens=prompt_tokens,
        window_tokens=facts.input_budget,
        turns=turns,
        compactions=compactions,
        grounding_relevance=grounding_relevance,
        history_tokens=history_tokens,
    )
    data = score.as_dict()
    data["percent"] = round(100 * score.value)
    return data


def _refreshes(manager: ContextManager) -> dict[str, Any] | None:
    """What the session's keep-alive refreshes cost and saved (None before the first)."""
    ledger = manager.stability.ledger
    if not ledger.sent:
        return None
    return {
        "sent": ledger.sent,
        "cost": ledger.cost,
        "saved": ledger.saved,
        "stopped": ledger.stopped,
    }


def _sections(used: dict[str, Any], window: int) -> list[dict[str, Any]]:
    rows = []
    for name, label in SECTION_LABELS.items():
        value = used.get(name, 0)
        tokens = value.get("tokens", 0) if isinstance(value, dict) else int(value)
        if tokens:
            share = 100 * tokens / window if window else 0
            rows.append({"name": name, "label": label, "tokens": tokens, "width": round(share, 2)})
    return rows


def _tiers(tiers: dict[str, int]) -> list[dict[str, Any]]:
    ordered = sorted(
        tiers.items(),
        key=lambda kv: (TIER_ORDER.index(kv[0]) if kv[0] in TIER_ORDER else len(TIER_ORDER), kv[0]),
    )
    return [{"name": name, "tokens": tokens} for name, tokens in ordered if tokens]


def sparkline_points(values: list[float], width: int = 120, height: int = 24) -> str:
    """SVG polyline points for shares in [0, 1]; empty for fewer than two turns."""
    if len(values) < 2:
        return ""
    step = width / (len(values) - 1)
    return " ".join(
        f"{i * step:.1f},{height - max(0.0, min(1.0, v)) * height:.1f}"
        for i, v in enumerate(values)
    )
