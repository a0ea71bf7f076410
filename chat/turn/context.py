"""The bridge between a stored session and the context engine, for one turn.

A turn opens the session's context once (`chat.turn.session.SessionContext`: the session
row, its message rows, its compactions, the engine built once from the small header),
prepares the request from it, and after the response records the exchange, the usage
and the HUD figures and commits them in one transaction. Notices (files shed, history
truncated) are stored as system events, so they are still there after a reload.

Images: only the turn that attaches an image sends its pixels (a multimodal user message).
In history every such message reads as its text plus one stable reference line per image
(`history.images.history_text`), the same whether the history is live or derived from
the rows after a reload, so a reload neither changes the prompt nor its cost.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings

from chat.repo import boundary, sessionsets
from chat.repo.repomap import engine as repomap_engine
from chat.turn import endless, hud, outgoing, seen
from chat.turn.session import (
    SessionBusy,
    SessionContext,
    held,
    release_lease,
    take_lease,
)
from chat.turn.sets import Notice, release_dropped, sync_sets
from chat.turn.working import ToolRef, assistant_history_text, is_recorded
from contextcore.llm import Message as ChatMessage
from contextcore.llm import Usage
from contextcore.manager import ContextManager, PreparedPrompt
from contextcore.models import ModelFacts
from contextcore.prompt.assembly import ImageInput
from history import services
from history.grounding import RelatedItem, format_related, related_context
from history.images import data_url, history_text
from history.models import Image, Message, Session
from history.selectors import session_latest

__all__ = ["ToolRef"]  # the turn names a tool call by it
log = logging.getLogger(__name__)
WARNING_KINDS = {"files_shed", "history_truncated", "history_trimmed", "message_truncated"}


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
    related: list[dict[str, Any]] = field(default_factory=list)  # as sent, with sources
    seen: dict[str, Any] | None = None  # the reply's "What the model saw" note


# -- the turn --------------------------------------------------------------------------


def open_turn(session_id: str, turn_id: str, user_text: str, model: str = "") -> SessionContext:
    """Take the session's turn lease and open its context (raises `SessionBusy` while
    another turn runs, `SessionMissing` for an unknown session)."""
    owner = take_lease(session_id, turn_id, services.title_from(user_text))
    try:
        return SessionContext.open(session_id, model=model, owner=owner)
    except BaseException:
        release_lease(session_id, owner)
        raise


async def prepare(
    ctx: SessionContext,
    *,
    user_text: str,
    turn_id: str,
    images: Sequence[Image] = (),
) -> Prepared:
    """The turn's request, assembled once (`images`: the attached ones, as stored)."""
    managed = await _managed_view(ctx, user_text, turn_id)
    return await database_sync_to_async(_prepare)(ctx, user_text, turn_id, images, managed)


async def _managed_view(ctx: SessionContext, user_text: str, turn_id: str):
    if not endless.endless_state(ctx.session)["enabled"]:
        return endless.Managed()
    return await endless.managed_history(
        ctx.session, ctx.history, user_text, turn_id, ctx.manager, ctx.tools
    )


def grounding_enabled(session: Session) -> bool:
    return settings.ACDC_GROUNDING if session.grounding is None else bool(session.grounding)


def _ground(ctx: SessionContext, user_text: str) -> list[RelatedItem]:
    """Offer the most relevant earlier summaries and pinned notes as "Related context"
    (within its token budget); returns them (none when off)."""
    session, manager = ctx.session, ctx.manager
    if not grounding_enabled(session):
        if manager.reference:
            manager.set_context_texts(
                repo_map=manager.repo_map, file_tree=manager.file_tree, metadata=manager.metadata
            )
        return []
    in_view = tuple(m["id"] for m in ctx.history if m.get("id"))
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
    return items


def _prepare(ctx: SessionContext, user_text, turn_id, attached=(), managed=None) -> Prepared:
    session, manager = ctx.session, ctx.manager
    set_notices, entries = sync_sets(session, manager)
    related = _ground(ctx, user_text)
    now = time.time()
    repomap_engine.fill(
        manager,
        selected=[e.path for e in entries if e.type == "file" and e.active and not e.stub],
        pinned=[e.path for e in entries if e.type == "file" and e.pinned],
        user_text=user_text,
        now=now,
    )
    inputs = [ImageInput(i.mime, data_url(i.sha256), i.width, i.height) for i in attached]
    substitute = managed.history if managed else None
    with manager.substituted_history(substitute):
        prompt = manager.prepare_request(user_text, images=inputs, now=now)
    cut = substitute is None and any(n.kind == "history_truncated" for n in prompt.notices)
    ctx.note_engine_history(cut)
    release_dropped(session, manager, entries)
    notices = [Notice(ctx.warning, "warning")] if ctx.warning else []
    if managed is not None and managed.notice:
        notices.append(Notice(managed.notice, "warning"))
    notices += unique_notices(
        [
            *set_notices,
            *_credential_notices(session, manager, prompt),
            *(
                Notice(n.text, "warning" if n.kind in WARNING_KINDS else "info", n.paths)
                for n in [*manager.restore_notices, *prompt.notices]
            ),
        ]
    )
    for notice in notices:
        ctx.append(
            role=Message.Role.SYSTEM, content=notice.text, turn_id=turn_id, system_event=True
        )
    related_rows = seen.related_rows(related)
    return Prepared(
        messages=prompt.messages,
        manager=manager,
        facts=ctx.facts,
        breakdown=prompt.breakdown,
        notices=notices,
        metadata={"acdc": {"price_model": ctx.model, "breakdown": _report_breakdown(prompt)}},
        estimated_tokens=prompt.estimated_tokens,
        history_text=history_text(user_text, attached),
        grounding_relevance=sum(i.relevance for i in related) / len(related) if related else None,
        related=related_rows,
        seen=_seen_note(managed, related_rows),
    )


def _seen_note(managed: endless.Managed | None, related: list[dict[str, Any]]):
    view = managed.view if managed is not None else None
    if view is None or not view.applies:
        return seen.note(related=related)
    return seen.note(
        template=view.template_name,
        template_source=view.template_source,
        summary=view.managed_prompt,
        related=related,
    )


def _credential_notices(
    session: Session, manager: ContextManager, prompt: PreparedPrompt
) -> list[Notice]:
    """A warning for each file or section of the request that seems to hold a credential
    (sent as a marker, `chat.turn.outgoing`): once per session (an identical stored notice
    means it was said), but for each of the person's messages that holds one."""
    if not (found := outgoing.findings(manager.file_context.items(), prompt)):
        return []
    texts = [f.text() for f in found]
    said = set(
        Message.objects.filter(
            session=session, role=Message.Role.SYSTEM, content__in=texts
        ).values_list("content", flat=True)
    )
    return [
        Notice(text, "warning")
        for text, finding in zip(texts, found, strict=True)
        if text not in said or finding.section == "current_message"
    ]


def finish_turn(
    ctx: SessionContext,
    prepared: Prepared,
    *,
    turn_id: str,
    user_text: str,
    status: str,
    answer: str,
    usage: Usage | None,
    ids: tuple[str, str],
    toolcalls: Sequence[ToolRef] = (),
) -> dict[str, Any]:
    """Record the exchange, the usage and the HUD figures, and commit them together with
    the engine state, giving the turn lease back; returns the HUD data.

    The turn's tool calls stay in history as `toolcall_ref` lines ahead of the answer;
    their outputs are objects in the session's sets, rendered only while active."""
    manager = prepared.manager
    refs = tuple(toolcalls)
    if is_recorded(status, answer, len(refs)):
        manager.record_exchange(
            prepared.history_text or user_text, assistant_history_text(answer, refs), ids=ids
        )
    cost = hud.cost_of(usage, prepared.facts) if usage else None
    billed = usage.as_dict() if usage else {}
    services.token_usage_record(
        session_id=ctx.session_id,
        turn_id=turn_id,
        model=prepared.facts.name,
        sections=prepared.breakdown.get("sections", {}),
        tiers=prepared.breakdown.get("tiers", {}),
        estimated_prompt_tokens=prepared.estimated_tokens,
        usage=billed,
        cost=cost,
        related=prepared.related,
    )
    row = (billed.get("prompt_tokens", 0), billed.get("cache_read_tokens", 0), cost)
    # The HUD reads the breakdown the request's own assembly made, this exchange included;
    # when the model's tools changed the sets, it previews what they hold now.
    ctx.breakdown, ctx.relevance = prepared.breakdown, prepared.grounding_relevance
    if refs:
        held_before = manager.file_context.items()
        sync_sets(ctx.session, manager)
        if manager.file_context.items() != held_before:
            ctx.breakdown = None
    data = ctx.figures(extra_usage=row)
    ctx.commit(hud=data, usage=row, release=True)
    return data


# -- changes outside a turn ---------------------------------------------------------------


def select_files(
    session_id: str,
    *,
    add: Sequence[str] = (),
    drop: Sequence[str] = (),
    pin: Sequence[str] = (),
    unpin: Sequence[str] = (),
    model: str = "",
    confirmed: Collection[str] = frozenset(),
) -> list[str]:
    """Change a session's object sets from the command line (`--add/--drop/--pin/--unpin`);
    returns a message for every refusal. A secret-shaped file is added or pinned only when
    it is in `confirmed`."""
    session = Session.objects.get(pk=session_id)
    added, secrets, problems = _screen_choice(session, add, confirmed)
    pinned, pin_secrets, pin_problems = _screen_choice(session, pin, confirmed)
    problems += pin_problems
    steps = [
        (drop, sessionsets.deactivate, "was not selected"),
        (added, sessionsets.activate, ""),
        (pinned, sessionsets.pin, ""),
        (unpin, sessionsets.unpin, "was not pinned"),
    ]
    for paths, change, refusal in steps:
        for path in paths:
            extra = {}
            if change in (sessionsets.activate, sessionsets.pin):
                extra["allow_secret"] = path in secrets or path in pin_secrets
            try:
                change(session, path, **extra)
            except sessionsets.SetsError as exc:
                problems.append(f"{path} {refusal}" if refusal else str(exc))
    with held(session_id) as owner:
        model = model or session.model or settings.ACDC_MODEL
        ctx = SessionContext.open(session_id, model=model, owner=owner)
        problems += [n.text for n in sync_sets(ctx.session, ctx.manager)[0]]
        ctx.commit(hud=ctx.figures())
    return problems


def _screen_choice(
    session: Session, paths: Sequence[str], confirmed: Collection[str]
) -> tuple[list[str], set[str], list[str]]:
    """The person's choice through the repository boundary: (paths that may go on, the
    secrets among them, refusals). A secret goes on when confirmed now, or when it is
    already in the session's active or pinned set (confirmed before)."""
    allowed, secrets, problems = [], set(), []
    for path in paths:
        found = boundary.verdict(path) if path else boundary.OK
        if found.kind == "internal":
            problems.append(f"{path} was not added: {found.reason}")
        elif found.kind == "secret" and not (
            path in confirmed or sessionsets.confirmed_secret(session.id, path)
        ):
            problems.append(boundary.secret_refusal(path))
        else:
            allowed.append(path)
            if found.kind == "secret":
                secrets.add(path)
    return allowed, secrets, problems


def selected_files(session: Session) -> list[str]:
    """The session's active files (what the picker shows ticked)."""
    return sessionsets.active_paths(session)


async def set_selection(
    session_id: str, paths: tuple[str, ...], confirmed=frozenset(), outlines=frozenset()
) -> tuple[list[str], dict]:
    """Make the selection exactly `paths` (those in `outlines` as their outline); returns
    refusals and the HUD preview. Internal paths are refused; a secret-shaped file only
    with the person's confirmation (`confirmed`)."""
    return await database_sync_to_async(_set_selection)(session_id, paths, confirmed, outlines)


def _set_selection(session_id: str, paths: tuple[str, ...], confirmed=(), outlines=()):
    session = Session.objects.get(pk=session_id)
    allowed, secrets, problems = _screen_choice(session, paths, confirmed)
    refused = sessionsets.set_active_files(session, allowed, confirmed=secrets, outlines=outlines)
    problems += [f"{path} was not added: {reason}" for path, reason in _by_path(refused, allowed)]
    notices, data = _follow_sets(session_id)
    return problems + notices, data


def refresh_sets(session_id: str) -> dict:
    """After the model's tools or the disk changed the sets: the engine and the HUD follow."""
    return _follow_sets(session_id)[1]


def _follow_sets(session_id: str) -> tuple[list[str], dict]:
    """The engine takes the sets as they are now, and the HUD shows it. While a turn runs
    the header is its to write: the HUD is a preview, and the next turn reads the sets."""
    try:
        with held(session_id) as owner:
            return _sync_sets_and_hud(session_id, owner)
    except SessionBusy:
        return _sync_sets_and_hud(session_id, owner="")


def _sync_sets_and_hud(session_id: str, owner: str) -> tuple[list[str], dict]:
    ctx = SessionContext.open(session_id, owner=owner)
    notices = [n.text for n in sync_sets(ctx.session, ctx.manager)[0]]
    data = ctx.figures()
    if owner:
        ctx.commit(hud=data)
    return notices, data


def _by_path(messages: list[str], paths: Sequence[str]) -> list[tuple[str, str]]:
    """Pair each refusal with the path it is about (refusals name their path)."""
    pairs = []
    for message in messages:
        path = next((p for p in paths if p and p in message), "")
        reason = message.removeprefix(f"{path}: ") if path else message
        pairs.append((path or "a file", reason))
    return pairs


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
    try:
        with held(session.id) as owner:
            return _restore(session.id, owner)
    except SessionBusy:  # another worker is answering in it: that turn keeps it current
        return session, []


def _restore(session_id: str, owner: str) -> tuple[Session, list[str]]:
    ctx = SessionContext.open(session_id, owner=owner)
    sessionsets.resume(ctx.session)
    sync_notices = sync_sets(ctx.session, ctx.manager)[0]
    found = unique_notices([*ctx.manager.restore_notices, *sync_notices])
    notices = [f"Dropped from the selection on restore: {n.text}" for n in found]
    for text in notices:
        ctx.append(role=Message.Role.SYSTEM, content=text, system_event=True)
    ctx.commit(hud=ctx.figures())  # its preview warms the token counts too
    return ctx.session, notices


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
