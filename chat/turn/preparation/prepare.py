"""The turn's request, prepared once from the session's context.

A turn opens the session's context once (`chat.session.SessionContext`: the session
row, its message rows, its compactions, the engine built once from the small header) and
prepares its request from it: the sets into the engine (`sets`), the related context,
the repository map, then one assembly (`ContextManager.prepare_request`), whose breakdown
the HUD reads after the turn. Notices (files shed, history truncated, credentials) are
stored as system events, so they are still there after a reload.

Images: only the turn that attaches an image sends its pixels (a multimodal user message).
In history every such message reads as its text plus one stable reference line per image
(`history.images.history_text`), the same whether the history is live or derived from
the rows after a reload, so a reload neither changes the prompt nor its cost.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings

from chat.repo import sessionsets
from chat.repo.repomap import engine as repomap_engine
from chat.session import (
    SessionContext,
    Wiring,
    endless,
    outgoing,
    release_lease,
    suggesting,
    take_lease,
    trail,
)
from chat.session.sets import Notice, release_dropped, sync_sets, unique_notices
from chat.turn import seen
from contextcore.llm import Message as ChatMessage
from contextcore.manager import ContextManager, PreparedPrompt
from contextcore.models import ModelFacts
from contextcore.prompt.assembly import ImageInput
from history import services
from history.grounding import RelatedItem, format_related, related_context
from history.images import data_url, history_text
from history.models import Image, Message, Session

log = logging.getLogger(__name__)
WARNING_KINDS = frozenset(
    {"files_shed", "history_truncated", "history_trimmed", "message_truncated"}
)


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


def open_turn(
    session_id: str,
    turn_id: str,
    user_text: str,
    model: str,
    wiring: Wiring,
) -> SessionContext:
    """Take the session's turn lease and open its context (raises `SessionBusy` while
    another turn runs, `SessionMissing` for an unknown session)."""
    owner = take_lease(session_id, turn_id, services.title_from(user_text))
    try:
        sessionsets.hold_secret_floor(session_id, wiring.repository.root)
        return SessionContext.open(session_id, wiring, model=model, owner=owner)
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
        ctx.session,
        ctx.history,
        user_text,
        turn_id,
        ctx.runtime,
        ctx.manager,
        ctx.tools,
        root=ctx.repository.root,
    )


def grounding_enabled(session: Session) -> bool:
    return settings.ACDC_GROUNDING if session.grounding is None else bool(session.grounding)


def _ground(ctx: SessionContext, user_text: str) -> list[RelatedItem]:
    """Offer the most relevant earlier summaries and pinned notes as "Related context"
    (within its token budget); returns them (none when off)."""
    session, manager = ctx.session, ctx.manager
    if not grounding_enabled(session):
        if manager.reference:
            manager.update_context_texts(reference="")
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
    manager.update_context_texts(reference=format_related(items))
    return items


def _first_time(ctx: SessionContext, note: str | None) -> bool:
    """Whether the session's conversation does not hold this note yet: what acdc assumes of
    a model is said once a session (and again when it changes), not before every reply."""
    if not note:
        return False
    held = Message.objects.filter(session_id=ctx.session.id, system_event=True, content=note)
    return not held.exists()


def _prepare(ctx: SessionContext, user_text, turn_id, attached=(), managed=None) -> Prepared:
    session, manager = ctx.session, ctx.manager
    repo = ctx.repository.indexed()
    set_notices, entries = sync_sets(session, manager, ctx.maps, repo)
    related = _ground(ctx, user_text)
    now = time.time()
    repomap_engine.fill(
        manager,
        ctx.maps,
        selected=[e.path for e in entries if e.type == "file" and e.active and not e.stub],
        pinned=[e.path for e in entries if e.type == "file" and e.pinned],
        user_text=user_text,
        root=ctx.repository.root,
        now=now,
    )
    held = [e.path for e in entries if e.type == "file" and (e.active or e.pinned)]
    suggesting.fill(ctx, in_context=held, user_text=user_text)
    inputs = [ImageInput(i.mime, data_url(i.sha256), i.width, i.height) for i in attached]
    substitute = managed.history if managed else None
    trail.refresh(ctx, view=substitute)
    with manager.substituted_history(substitute):
        prompt = manager.prepare_request(user_text, images=inputs, now=now)
    cut = substitute is None and any(n.kind == "history_truncated" for n in prompt.notices)
    ctx.note_engine_history(cut)
    release_dropped(session, manager, entries, repo)
    notices = [Notice(ctx.warning, "warning")] if _first_time(ctx, ctx.warning) else []
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
        metadata={
            "acdc": {"price_model": ctx.model, "breakdown": _report_breakdown(prompt, manager)}
        },
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
    (sent as a marker, `chat.session.outgoing`): once per session (an identical stored notice
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


def _report_breakdown(prompt, manager) -> dict[str, Any]:
    """What the dry-run report shows beside the request: sections, tiers, the project
    instructions files sent with their tokens (the section alone says only how many), and
    the regions suggested for the message with why."""
    breakdown = prompt.breakdown
    count = manager.counter.count_text
    return {
        "sections": {k: v for k, v in breakdown.get("sections", {}).items() if v},
        "tiers": breakdown.get("tiers", {}),
        "instructions": [[f.name, count(f.text)] for f in manager.instructions.files],
        "suggested": suggesting.report(manager),
    }
