"""The session's state codec: the engine's state as a small header and a layout row, and back.

`split_state` writes the engine's state without its history (the message rows hold it)
as the session row's header, and the cache layout's body as its own row, named by digest
so an unchanged layout is not written again; `build_manager` builds the engine from them
and the history derived from the rows. A session saved before the history was derived
adopts its saved history once, as a rewrite record (`adopt_saved_history`).
Non-goals: when to read or write (`chat.session.context`), the lease.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings

from chat.repo import edittools
from chat.session import working
from contextcore.manager import ContextConfig, ContextManager
from contextcore.models import ModelFacts
from contextcore.tokens import TokenCounter
from history.models import Compaction, Session, SessionLayout

HEADER_VERSION = 2
LAYOUT_BODY = ("l0_digest", "snapshot", "updates", "blobs")


def system_prompt(repository: str) -> str:
    """acdc's own prompt, naming the served repository (`repository`: its folder's name)."""
    template = (Path(__file__).parent / "prompts" / "system.md").read_text()
    return template.replace("{repository}", repository)


def context_config(facts: ModelFacts | None = None, *, repository: str) -> ContextConfig:
    return ContextConfig(
        system_prompt=edittools.instruction(system_prompt(repository), facts),
        tier_scheme=settings.ACDC_TIER_SCHEME,
        compaction_trigger_tokens=settings.ACDC_COMPACTION_TRIGGER_TOKENS or None,
        keep_alive=settings.ACDC_KEEP_WARM,
    )


def digest(body: dict[str, Any]) -> str:
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def split_state(manager: ContextManager) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The engine's state as a small header and the layout body. The history is left out
    (the rows hold it); so are the per-message stability counts in the append-only scheme,
    which never reads them (the seed scheme does, and keeps them)."""
    with manager.substituted_history(()):  # taken without it, not copied to be dropped
        state = manager.to_state()
    state.pop("history", None)
    stability = dict(state.get("stability") or {})
    layout = stability.pop("layout", None)
    if stability.get("scheme") == "acdc":
        stability["items"] = _no_history(stability.get("items") or {})
        state["last_items"] = _no_history(state.get("last_items") or {})
    body = None
    if layout:
        body = {key: layout[key] for key in LAYOUT_BODY}
        stability["layout_head"] = {k: v for k, v in layout.items() if k not in LAYOUT_BODY}
    state["stability"] = stability
    return {"version": HEADER_VERSION, "engine": state}, body


def _no_history(items: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in items.items() if not k.startswith("history:")}


def build_manager(
    facts: ModelFacts,
    engine: dict[str, Any],
    layout: SessionLayout | None,
    history: list,
    guard: Callable[[str], str],
    counter: TokenCounter,
    repo: Path,
) -> ContextManager:
    """The session's engine for the served repository at `repo`."""
    config = context_config(facts, repository=repo.name)
    if not engine:
        manager = ContextManager(facts, counter, repo_root=repo, config=config)
        manager.file_context.guard = guard
        manager.set_history(history)
        return manager
    state = dict(engine)
    # Saved files pass the guard before the engine reads them back.
    state["files"] = [f for f in state.get("files", []) if not guard(f.get("path", ""))]
    stability = dict(state.get("stability") or {})
    head = stability.pop("layout_head", None)
    if head is not None and layout is not None:
        stability["layout"] = {**layout.body, **head}
    state["stability"] = stability
    state["history"] = history
    manager = ContextManager.from_state(state, facts, counter, repo_root=repo, config=config)
    manager.file_context.guard = guard
    return manager


def adopt_saved_history(
    session: Session, engine: dict[str, Any], derived: list, last_seq: int
) -> tuple[list, list[Compaction]]:
    """A session saved before the history was derived: its saved history becomes one
    rewrite record of references, once, so what the model sees does not change."""
    saved = [dict(m) for m in engine["history"]]
    Compaction.objects.create(
        session=session,
        case=Compaction.Case.REWRITE,
        reason="Working history adopted from the saved engine state.",
        after=working.as_refs(saved, derived),
        upto_seq=last_seq,
    )
    compactions = working.live_compactions(session.id)
    rows = working.load_rows(session.id)
    return working.derive(rows, compactions), compactions
