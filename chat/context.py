"""The bridge between a stored session and the context engine, for one turn.

Each turn rebuilds the session's `ContextManager` from `Session.context_state` (so any
worker, or the CLI, continues with the same prompt layout and keeps hitting the provider's
cache), asks it for the request, and saves the state back after the response together
with the token usage and the HUD figures. Notices (files shed, history truncated) are
stored as system events, so they are still there after a reload.

Images: only the turn that attaches an image sends its pixels (a multimodal user message).
In history every such message reads as its text plus one stable reference line per image
(`history.images.history_text`), the same whether the history comes from the saved engine
state or is rebuilt from the rows, so a reload neither changes the prompt nor its cost.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings

from chat import hud
from chat.runtime import chat_model, facts_for, system_prompt, token_counter
from contextcore.assembly import ImageInput
from contextcore.llm import Message as ChatMessage
from contextcore.llm import Usage
from contextcore.manager import ContextConfig, ContextManager
from contextcore.models import ModelFacts
from history import services
from history.images import data_url, history_text, images_for_messages, images_get
from history.models import Message, Session

log = logging.getLogger(__name__)
WARNING_KINDS = {"files_shed", "history_truncated", "history_trimmed", "message_truncated"}


@dataclass(frozen=True)
class Notice:
    text: str
    level: str = "info"
    paths: tuple[str, ...] = ()


@dataclass
class Prepared:
    messages: list[ChatMessage]
    manager: ContextManager
    facts: ModelFacts
    breakdown: dict[str, Any]
    notices: list[Notice] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    estimated_tokens: int = 0
    history_text: str = ""  # how this turn's user message reads in later prompts


def context_config() -> ContextConfig:
    return ContextConfig(
        system_prompt=system_prompt(),
        tier_scheme=settings.ACDC_TIER_SCHEME,
        compaction_trigger_tokens=settings.ACDC_COMPACTION_TRIGGER_TOKENS or None,
    )


def load_manager(session: Session, facts: ModelFacts, exclude_turn: str = "") -> ContextManager:
    """The session's context engine, restored from its saved state (or from its messages)."""
    counter = token_counter(facts.tokenizer)
    repo = Path(settings.ACDC_REPO)
    engine = (session.context_state or {}).get("engine")
    if engine:
        return ContextManager.from_state(
            engine, facts, counter, repo_root=repo, config=context_config()
        )
    manager = ContextManager(facts, counter, repo_root=repo, config=context_config())
    manager.set_history(_stored_history(session, exclude_turn))
    return manager


def save_manager(session_id: str, manager: ContextManager, hud_data: dict | None = None) -> None:
    state = dict(Session.objects.get(pk=session_id).context_state or {})
    state["engine"] = manager.to_state()
    if hud_data is not None:
        state["hud"] = hud_data
    services.session_save_context_state(session_id=session_id, state=state)


async def prepare(
    *, session: Session, user_text: str, model: str, turn_id: str, images: tuple[str, ...] = ()
) -> Prepared:
    facts, warning = await asyncio.to_thread(facts_for, model)
    return await _prepare(session.id, user_text, model, turn_id, facts, warning, images)


@database_sync_to_async
def _prepare(session_id, user_text, model, turn_id, facts, warning, images=()) -> Prepared:
    session = Session.objects.get(pk=session_id)
    manager = load_manager(session, facts, exclude_turn=turn_id)
    attached = images_get(images)
    inputs = [ImageInput(i.mime, data_url(i.sha256), i.width, i.height) for i in attached]
    prompt = manager.prepare_request(user_text, images=inputs, now=time.time())
    notices = [Notice(warning, "warning")] if warning else []
    notices += [
        Notice(n.text, "warning" if n.kind in WARNING_KINDS else "info", n.paths)
        for n in [*manager.restore_notices, *prompt.notices]
    ]
    for notice in notices:
        services.message_append(
            session=session,
            role=Message.Role.SYSTEM,
            content=notice.text,
            turn_id=turn_id,
            system_event=True,
        )
    save_manager(session_id, manager)
    return Prepared(
        messages=prompt.messages,
        manager=manager,
        facts=facts,
        breakdown=prompt.breakdown,
        notices=notices,
        metadata={"acdc": {"price_model": model, "breakdown": _report_breakdown(prompt)}},
        estimated_tokens=prompt.estimated_tokens,
        history_text=history_text(user_text, attached),
    )


async def after_turn(
    *,
    session: Session,
    prepared: Prepared,
    turn_id: str,
    user_text: str,
    status: str,
    answer: str,
    usage: Usage | None,
) -> dict[str, Any]:
    """Record the exchange, the usage and the HUD figures; returns the HUD data."""
    return await _after_turn(session.id, prepared, turn_id, user_text, status, answer, usage)


@database_sync_to_async
def _after_turn(session_id, prepared, turn_id, user_text, status, answer, usage):
    manager = prepared.manager
    if status == "complete" or (status == "cancelled" and answer):
        manager.record_exchange(prepared.history_text or user_text, answer)
    cost = hud.cost_of(usage, prepared.facts) if usage else None
    services.token_usage_record(
        session_id=session_id,
        turn_id=turn_id,
        model=prepared.facts.name,
        sections=prepared.breakdown.get("sections", {}),
        tiers=prepared.breakdown.get("tiers", {}),
        estimated_prompt_tokens=prepared.estimated_tokens,
        usage=usage.as_dict() if usage else {},
        cost=cost,
    )
    # The HUD shows what the context holds now: the next request, this exchange included.
    data = hud.hud_data(session_id, prepared.facts, manager)
    save_manager(session_id, manager, data)
    return data


def select_files(
    session_id: str, *, add: list[str] = (), drop: list[str] = (), model: str = ""
) -> list[str]:
    """Change a session's file selection; returns a message for every refusal."""
    session = Session.objects.get(pk=session_id)
    facts, _ = facts_for(model or session.model or settings.ACDC_MODEL or "acdc/dry-run")
    manager = load_manager(session, facts)
    problems = []
    for path in drop:
        if not manager.file_context.remove_file(path):
            problems.append(f"{path} was not selected")
    for path in add:
        result = manager.file_context.add_file(path)
        if not result.ok:
            problems.append(f"{path}: {result.reason}")
    save_manager(session_id, manager)
    return problems


def selected_files(session: Session) -> list[str]:
    engine = (session.context_state or {}).get("engine") or {}
    return [item["path"] for item in engine.get("files", [])]


async def set_selection(session_id: str, paths: tuple[str, ...]) -> tuple[list[str], dict]:
    """Make the selection exactly `paths`; returns refusals and the HUD preview."""
    session = await database_sync_to_async(Session.objects.get)(pk=session_id)
    model = chat_model(session.model)
    facts, _ = await asyncio.to_thread(facts_for, model)
    return await _set_selection(session_id, paths, facts)


@database_sync_to_async
def _set_selection(session_id: str, paths: tuple[str, ...], facts: ModelFacts):
    session = Session.objects.get(pk=session_id)
    manager = load_manager(session, facts)
    current = set(manager.file_context.get_files())
    problems = []
    for path in current - set(paths):
        manager.file_context.remove_file(path)
    for path in paths:
        if path not in current:
            result = manager.file_context.add_file(path)
            if not result.ok:
                problems.append(f"{path} was not added: {result.reason}")
    data = hud.hud_data(session_id, facts, manager)
    save_manager(session_id, manager, data)
    return problems, data


def _stored_history(session: Session, exclude_turn: str = "") -> list[ChatMessage]:
    rows = (
        session.messages.filter(system_event=False, role__in=["user", "assistant"])
        .exclude(content="")
        .exclude(turn_id=exclude_turn or None)
        .exclude(status=Message.Status.ERROR)
        .order_by("seq")
        .values_list("id", "role", "content")
    )
    images = images_for_messages(pk for pk, role, _ in rows if role == "user")
    return [
        {"role": role, "content": history_text(content, images.get(pk, []))}
        for pk, role, content in rows
    ]


def _report_breakdown(prompt) -> dict[str, Any]:
    breakdown = prompt.breakdown
    return {
        "sections": {k: v for k, v in breakdown.get("sections", {}).items() if v},
        "tiers": breakdown.get("tiers", {}),
    }


def restore_latest_session(repository: str) -> tuple[Session | None, list[str]]:
    """At start-up: load the newest session's context (messages and file selection), drop
    files that no longer exist with a notice stored in the session, and warm the token
    counts, so the first page and the first turn find everything ready."""
    from history.selectors import session_latest

    session = session_latest(repository=repository)
    if session is None:
        return None, []
    facts, _ = facts_for(chat_model(session.model))
    manager = load_manager(session, facts)
    notices = [f"Dropped from the selection on restore: {n.text}" for n in manager.restore_notices]
    for text in notices:
        services.message_append(
            session=session, role=Message.Role.SYSTEM, content=text, system_event=True
        )
    manager.estimate_prompt_tokens("")
    save_manager(session.id, manager, hud.hud_data(session.id, facts, manager))
    return session, notices
