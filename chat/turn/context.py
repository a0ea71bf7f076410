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
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings

from chat.llm.runtime import chat_model, facts_for, token_counter
from chat.repo import sessionsets
from chat.turn import endless, hud
from chat.turn.sets import Notice, release_dropped, sync_sets
from contextcore.llm import Message as ChatMessage
from contextcore.llm import Usage
from contextcore.manager import ContextConfig, ContextManager
from contextcore.models import ModelFacts
from contextcore.prompt.assembly import ImageInput
from history import memory, services
from history.grounding import format_related, related_context
from history.images import data_url, history_text, images_for_messages, images_get
from history.models import Message, Session
from history.selectors import session_latest

log = logging.getLogger(__name__)
WARNING_KINDS = {"files_shed", "history_truncated", "history_trimmed", "message_truncated"}


@dataclass(frozen=True)
class ToolRef:
    """A tool call of the turn, as later prompts name it (seed 001 §4.1 `toolcall_ref`)."""

    object_id: str
    tool: str
    status: str

    def line(self) -> str:
        return f"toolcall_ref id={self.object_id} tool={self.tool} status={self.status}"


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
    grounding_relevance: float | None = None  # of the related context offered, 0..1


def system_prompt() -> str:
    template = (Path(__file__).parent / "prompts" / "system.md").read_text()
    return template.replace("{repository}", Path(settings.ACDC_REPO).name)


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
    session = Session.objects.get(pk=session_id)
    # Kept in memory too: search falls back to it when the store cannot answer.
    memory.remember(session_id, session.repository, session.display_title, manager.get_history())
    state = dict(session.context_state or {})
    state["engine"] = manager.to_state()
    if hud_data is not None:
        state["hud"] = hud_data
    services.session_save_context_state(session_id=session_id, state=state)


async def prepare(
    *,
    session: Session,
    user_text: str,
    model: str,
    turn_id: str,
    images: tuple[str, ...] = (),
    tool_tokens: int = 0,
) -> Prepared:
    facts, warning = await asyncio.to_thread(facts_for, model)
    if tool_tokens:
        facts = replace(facts, tool_tokens=tool_tokens)
    managed = await _managed_view(session, facts, user_text, turn_id)
    return await _prepare(session.id, user_text, model, turn_id, facts, warning, images, managed)


async def _managed_view(session: Session, facts: ModelFacts, user_text: str, turn_id: str):
    if not endless.endless_state(session)["enabled"]:
        return endless.Managed()
    history = await database_sync_to_async(
        lambda: load_manager(session, facts, exclude_turn=turn_id).get_history()
    )()
    return await endless.managed_history(session, history, user_text, turn_id)


def grounding_enabled(session: Session) -> bool:
    state = (session.context_state or {}).get("grounding")
    return settings.ACDC_GROUNDING if state is None else bool(state)


def _ground(session: Session, manager: ContextManager, user_text: str) -> float | None:
    """Offer the most relevant earlier summaries and pinned notes as "Related context"
    (within its token budget); returns their average relevance, None when off."""
    if not grounding_enabled(session):
        if manager.reference:
            manager.set_context_texts(
                repo_map=manager.repo_map, file_tree=manager.file_tree, metadata=manager.metadata
            )
        return None
    in_view = tuple(m["id"] for m in manager.get_history() if m.get("id"))
    items = related_context(
        repository=session.repository,
        text=user_text,
        limit=settings.ACDC_GROUNDING_ITEMS,
        exclude_ids=in_view,
    )
    while items and manager.counter.count(format_related(items)) > settings.ACDC_GROUNDING_TOKENS:
        items = items[:-1]
    manager.set_context_texts(
        repo_map=manager.repo_map,
        file_tree=manager.file_tree,
        reference=format_related(items),
        metadata=manager.metadata,
    )
    return sum(i.relevance for i in items) / len(items) if items else None


@database_sync_to_async
def _prepare(
    session_id, user_text, model, turn_id, facts, warning, images=(), managed=None
) -> Prepared:
    session = Session.objects.get(pk=session_id)
    manager = load_manager(session, facts, exclude_turn=turn_id)
    set_notices = sync_sets(session, manager)
    relevance = _ground(session, manager, user_text)
    attached = images_get(images)
    inputs = [ImageInput(i.mime, data_url(i.sha256), i.width, i.height) for i in attached]
    with manager.substituted_history(managed.history if managed else None):
        prompt = manager.prepare_request(user_text, images=inputs, now=time.time())
    release_dropped(session, manager)
    notices = [Notice(warning, "warning")] if warning else []
    if managed is not None and managed.notice:
        notices.append(Notice(managed.notice, "warning"))
    notices += unique_notices(
        [
            *set_notices,
            *(
                Notice(n.text, "warning" if n.kind in WARNING_KINDS else "info", n.paths)
                for n in [*manager.restore_notices, *prompt.notices]
            ),
        ]
    )
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
        grounding_relevance=relevance,
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
    toolcalls: Sequence[ToolRef] = (),
) -> dict[str, Any]:
    """Record the exchange, the usage and the HUD figures; returns the HUD data.

    The turn's tool calls stay in history as `toolcall_ref` lines ahead of the answer;
    their outputs are objects in the session's sets, rendered only while active."""
    refs = tuple(toolcalls)
    return await _after_turn(session.id, prepared, turn_id, user_text, status, answer, usage, refs)


def assistant_history_text(answer: str, toolcalls: Sequence[ToolRef]) -> str:
    lines = "\n".join(ref.line() for ref in toolcalls)
    return f"{lines}\n\n{answer}".strip() if lines else answer


@database_sync_to_async
def _after_turn(session_id, prepared, turn_id, user_text, status, answer, usage, toolcalls=()):
    manager = prepared.manager
    if status == "complete" or (status == "cancelled" and (answer or toolcalls)):
        manager.record_exchange(
            prepared.history_text or user_text,
            assistant_history_text(answer, toolcalls),
            ids=_turn_message_ids(session_id, turn_id),
        )
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
    data = hud.hud_data(session_id, prepared.facts, manager, prepared.grounding_relevance)
    save_manager(session_id, manager, data)
    return data


def select_files(
    session_id: str,
    *,
    add: Sequence[str] = (),
    drop: Sequence[str] = (),
    pin: Sequence[str] = (),
    unpin: Sequence[str] = (),
    model: str = "",
) -> list[str]:
    """Change a session's object sets from the command line (`--add/--drop/--pin/--unpin`);
    returns a message for every refusal."""
    session = Session.objects.get(pk=session_id)
    facts, _ = facts_for(model or session.model or settings.ACDC_MODEL or "acdc/dry-run")
    problems = []
    steps = [
        (drop, sessionsets.deactivate, "was not selected"),
        (add, sessionsets.activate, ""),
        (pin, sessionsets.pin, ""),
        (unpin, sessionsets.unpin, "was not pinned"),
    ]
    for paths, change, refusal in steps:
        for path in paths:
            try:
                change(session, path)
            except sessionsets.SetsError as exc:
                problems.append(f"{path} {refusal}" if refusal else str(exc))
    manager = load_manager(session, facts)
    problems += [n.text for n in sync_sets(session, manager)]
    save_manager(session_id, manager, hud.hud_data(session_id, facts, manager))
    return problems


def selected_files(session: Session) -> list[str]:
    """The session's active files (what the picker shows ticked)."""
    return sessionsets.active_paths(session)


async def set_selection(session_id: str, paths: tuple[str, ...]) -> tuple[list[str], dict]:
    """Make the selection exactly `paths`; returns refusals and the HUD preview."""
    session = await database_sync_to_async(Session.objects.get)(pk=session_id)
    model = chat_model(session.model)
    facts, _ = await asyncio.to_thread(facts_for, model)
    return await _set_selection(session_id, paths, facts)


@database_sync_to_async
def _set_selection(session_id: str, paths: tuple[str, ...], facts: ModelFacts):
    session = Session.objects.get(pk=session_id)
    refused = sessionsets.set_active_files(session, paths)
    problems = [f"{path} was not added: {reason}" for path, reason in _by_path(refused, paths)]
    manager = load_manager(session, facts)
    problems += [n.text for n in sync_sets(session, manager)]
    data = hud.hud_data(session_id, facts, manager)
    save_manager(session_id, manager, data)
    return problems, data


def refresh_sets(session_id: str) -> dict:
    """After the model's tools changed the sets: the engine and the HUD follow."""
    session = Session.objects.get(pk=session_id)
    facts, _ = facts_for(chat_model(session.model))
    manager = load_manager(session, facts)
    sync_sets(session, manager)
    data = hud.hud_data(session_id, facts, manager)
    save_manager(session_id, manager, data)
    return data


def pin_message(session_id: str, message_id: str, pinned: bool) -> bool:
    """Mirror a message's pin into the engine's working history (compaction keeps pinned
    messages verbatim). False when the message is no longer in the working history."""
    session = Session.objects.get(pk=session_id)
    facts, _ = facts_for(chat_model(session.model))
    manager = load_manager(session, facts)
    found = manager.pin_message(message_id, pinned)
    if found:
        save_manager(session_id, manager)
    return found


def _by_path(messages: list[str], paths: Sequence[str]) -> list[tuple[str, str]]:
    """Pair each refusal with the path it is about (refusals name their path)."""
    pairs = []
    for message in messages:
        path = next((p for p in paths if p and p in message), "")
        reason = message.removeprefix(f"{path}: ") if path else message
        pairs.append((path or "a file", reason))
    return pairs


def _turn_message_ids(session_id: str, turn_id: str) -> tuple[str, str]:
    """The stored ids of a turn's user message and answer, so the engine's history can
    name them (pins, compaction records)."""
    rows = Message.objects.filter(
        session_id=session_id, turn_id=turn_id, system_event=False, role__in=["user", "assistant"]
    ).values_list("role", "id")
    ids = dict(rows)
    return ids.get("user", ""), ids.get("assistant", "")


def _stored_history(session: Session, exclude_turn: str = "") -> list[ChatMessage]:
    rows = (
        session.messages.filter(
            system_event=False, role__in=["user", "assistant"], rolled_back=False
        )
        .exclude(content="")
        .exclude(turn_id=exclude_turn or None)
        .exclude(status=Message.Status.ERROR)
        .order_by("seq")
        .values_list("id", "role", "content", "pinned")
    )
    images = images_for_messages(pk for pk, role, _, _ in rows if role == "user")
    return [
        {
            "role": role,
            "content": history_text(content, images.get(pk, [])),
            "id": pk,
            "pinned": pinned,
        }
        for pk, role, content, pinned in rows
    ]


def _report_breakdown(prompt) -> dict[str, Any]:
    breakdown = prompt.breakdown
    return {
        "sections": {k: v for k, v in breakdown.get("sections", {}).items() if v},
        "tiers": breakdown.get("tiers", {}),
    }


def restore_latest_session(repository: str) -> tuple[Session | None, list[str]]:
    """At start-up: load the newest session's context (messages and object sets), reconcile
    its files with the disk (seed 001 §3.6), drop active files that no longer exist with a
    notice stored in the session, and warm the token counts, so the first page and the
    first turn find everything ready."""
    session = session_latest(repository=repository)
    if session is None:
        return None, []
    facts, _ = facts_for(chat_model(session.model))
    manager = load_manager(session, facts)
    sessionsets.resume(session)
    found = unique_notices([*manager.restore_notices, *sync_sets(session, manager)])
    notices = [f"Dropped from the selection on restore: {n.text}" for n in found]
    for text in notices:
        services.message_append(
            session=session, role=Message.Role.SYSTEM, content=text, system_event=True
        )
    manager.estimate_prompt_tokens("")
    save_manager(session.id, manager, hud.hud_data(session.id, facts, manager))
    return session, notices


def unique_notices(notices: Sequence[Any]) -> list[Any]:
    """One notice per file (the engine and the sets may both report a vanished file)."""
    seen: set[tuple[str, ...] | str] = set()
    kept = []
    for notice in notices:
        key = tuple(notice.paths) or notice.text
        if key not in seen:
            seen.add(key)
            kept.append(notice)
    return kept
