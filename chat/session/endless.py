"""Endless mode in the chat (seed 004, issue 6 item 8): a managed view instead of raw history.

Opt-in per session (`Session.endless`: enabled, template). Before each
turn the manager model (the smaller model) reads the template, the recent runs and the new
message, and its answer becomes one "Context summary (managed)" exchange before the last
few runs; the working history itself is unchanged (and is what the turn appends to). Every
view is stored as a `ManagedView`, failed ones too. Any failure fails open: the turn uses
the normal history and the chat says why.

Non-goals: the manager itself and the templates (`contextcore.conversation.endless`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings

from chat.llm.facts import DRY_RUN_MODEL
from chat.llm.runtime import Runtime, chat_model
from chat.session import outgoing
from chat.session.compaction import side_prefix
from contextcore.conversation import endless
from contextcore.conversation.exchanges import group_exchanges
from contextcore.llm import Message as ChatMessage
from contextcore.manager import ContextManager
from contextcore.prompt.siderequest import SidePrefix
from history.models import ManagedView, Message, Session

log = logging.getLogger(__name__)
DEFAULT_TEMPLATE = "default"


@dataclass(frozen=True)
class Managed:
    """What the turn uses: the history to assemble from (None: the normal one) and a
    notice for the chat when the view failed."""

    history: list[ChatMessage] | None = None
    notice: str = ""
    view: endless.ManagedView | None = None  # the view used, for the reply's note


def endless_state(session: Session) -> dict[str, Any]:
    state = session.endless or {}
    return {
        "enabled": bool(state.get("enabled")),
        "template": state.get("template") or DEFAULT_TEMPLATE,
    }


def config() -> endless.EndlessConfig:
    return endless.EndlessConfig(
        recent_runs=settings.ACDC_ENDLESS_RECENT_RUNS,
        passthrough_runs=settings.ACDC_ENDLESS_PASSTHROUGH_RUNS,
        token_threshold=settings.ACDC_ENDLESS_TOKEN_THRESHOLD,
    )


def templates(root: Path) -> list[endless.TemplateInfo]:
    """The templates to choose from: the built-in ones and those of the repository at `root`."""
    return endless.list_templates(root)


def set_endless(session_id: str, *, enabled: bool, template: str, root: Path) -> str:
    """Turn Endless mode on or off for a session (its template looked up in `root`, the
    served repository, too); returns a refusal or ""."""
    template = (template or DEFAULT_TEMPLATE).strip()
    if enabled:
        try:
            endless.resolve_template(template, root)
        except endless.TemplateError as exc:
            return str(exc)
    Session.objects.filter(pk=session_id).update(endless={"enabled": enabled, "template": template})
    return ""


async def managed_history(
    session: Session,
    history: list[ChatMessage],
    user_text: str,
    turn_id: str,
    runtime: Runtime,
    manager: ContextManager | None = None,
    tools: list[dict] | None = None,
    *,
    root: Path,
) -> Managed:
    """The managed view for this turn, or the normal history (with a notice on failure).
    With the chat's `manager` (and its `tools`), and the manager model being the chat's
    model, the request reuses what the chat sent last turn where that is cheaper (see
    `_chat_prefix`). `root` is the served repository (its templates, its name)."""
    state = endless_state(session)
    if not state["enabled"]:
        return Managed()
    model = settings.ACDC_SMALLER_MODEL or chat_model(session.model)
    facts, _ = runtime.facts(model)
    counter = runtime.counter(facts.tokenizer)
    settings_now = config()
    if endless.skip_reason(history, settings_now, counter):
        return Managed()
    previous = await _previous_summary(session.id)
    prefix = None
    if manager is not None and model == chat_model(session.model):
        prefix = await _chat_prefix(
            session.id, history, manager, (tools, facts, counter), settings_now
        )
    try:
        template = endless.resolve_template(state["template"], root)
    except endless.TemplateError as exc:
        view = endless.ManagedView(
            template_name=state["template"], model=model, failed=True, error=str(exc)
        )
    else:
        view = await endless.build_managed_view(
            history=history,
            latest_input=user_text,
            template=template,
            config=settings_now,
            client=outgoing.client(runtime.client),
            model=model,
            counter=counter,
            repo_root=root,
            repository=root.name,
            previous_summary=previous,
            prefix=prefix,
        )
    if view.skipped:
        return Managed()
    if model == DRY_RUN_MODEL and not view.failed:  # its answer is a report, not a view
        return Managed(notice=dry_run_notice(view))
    await _store(session.id, turn_id, view)
    if view.failed:
        log.warning("endless mode failed open in %s: %s", session.id, view.error)
        return Managed(notice=f"Endless mode used the full history this turn: {view.error}")
    return Managed(history=endless.apply_managed_view(history, view, settings_now), view=view)


def dry_run_notice(view: endless.ManagedView) -> str:
    """What Endless mode would have sent; acdc/dry-run only reports it, so nothing is kept."""
    tokens = int((view.stats or {}).get("manager_prompt_tokens") or 0)
    return (
        f"Dry run: Endless mode would send {tokens:,} tokens to build the managed view; "
        "this turn uses the full history."
    )


@database_sync_to_async
def _chat_prefix(session_id, history, manager, side_model, config) -> SidePrefix | None:
    """What the chat sent last turn, up to its last cache breakpoint: the managed view of
    the history before the last run, when the last turn used one (its stored view is the
    last and did not fail); else None (a prefix that was never sent is not cached)."""
    runs = group_exchanges(history)
    if len(runs) < 2 or not runs[-1][0].get("id"):
        return None
    last_turn = (
        Message.objects.filter(id=runs[-1][0]["id"]).values_list("turn_id", flat=True).first()
    )
    view = ManagedView.objects.filter(session_id=session_id).order_by("-created_at", "-id").first()
    if view is None or view.failed or not last_turn or view.turn_id != last_turn:
        return None
    before = [m for run in runs[:-1] for m in run]
    sent = endless.apply_managed_view(
        before, endless.ManagedView(managed_prompt=view.managed_prompt), config
    )
    return side_prefix(manager, *side_model, sent)


@database_sync_to_async
def _previous_summary(session_id: str) -> str:
    last = (
        ManagedView.objects.filter(session_id=session_id, failed=False)
        .order_by("-created_at", "-id")
        .values_list("managed_prompt", flat=True)
        .first()
    )
    return last or ""


@database_sync_to_async
def _store(session_id: str, turn_id: str, view: endless.ManagedView) -> None:
    ManagedView.objects.create(
        session_id=session_id,
        turn_id=turn_id,
        template_name=view.template_name or "",
        template_source=view.template_source or "",
        template_hash=view.template_hash or "",
        model=view.model or "",
        input_payload=view.input_payload or {},
        raw_output=view.raw_output or "",
        managed_prompt=view.managed_prompt or "",
        stats=view.stats or {},
        failed=view.failed,
        error=view.error or "",
    )
