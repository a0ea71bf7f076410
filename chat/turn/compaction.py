"""Compaction in the chat (issue 6): after the response, visible, persistent, undoable.

`compact_session` runs layer 1 for one session with the smaller model: it takes a
checkpoint, asks `contextcore.history.compaction.HistoryCompactor` for the compacted working
history, stores a `Compaction` record (case, boundary, confidence, summary, the message
ids no longer verbatim, tokens before and after, and both histories) and a system event
in the chat, and saves the engine state. Nothing is deleted: the store keeps every
message; only what the model sees changes, and `undo_compaction` puts the previous
working history back. Reload and restart read the saved engine state, so the detector is
never asked twice for the same compaction.

Non-goals: scheduling (the consumer runs this after a turn), rendering (templates).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from channels.db import database_sync_to_async
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from chat.llm.runtime import chat_model, facts_for, llm_client, token_counter
from chat.turn import checkpoints
from chat.turn.context import load_manager, save_manager
from contextcore.history.compaction import CompactionConfig, HistoryCompaction, create_compactor
from contextcore.manager import ContextManager
from history import services
from history.models import Checkpoint, Compaction, Message, Session

log = logging.getLogger(__name__)
FORCED_TRIGGER = 1  # "Compact now": any history above the verbatim window qualifies


class CompactionRefused(Exception):
    """Cannot compact or undo now; `str(exc)` is a message for the user."""


@dataclass(frozen=True)
class CompactionOutcome:
    case: str  # truncate | summarize | none
    compaction_id: int | None = None
    messages_before: int = 0
    messages_after: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    summary: str = ""
    note: str = ""  # the system event's text

    @property
    def changed(self) -> bool:
        return self.case in ("truncate", "summarize")


def smaller_model(session: Session) -> str:
    return settings.ACDC_SMALLER_MODEL or chat_model(session.model)


def needs_compaction(session_id: str) -> bool:
    """Past the trigger (checked cheaply after a turn, before anything is scheduled)."""
    session = Session.objects.get(pk=session_id)
    facts, _ = facts_for(chat_model(session.model))
    return load_manager(session, facts).should_compact()


async def compact_session(
    session_id: str, *, focus: str = "", force: bool = False
) -> CompactionOutcome:
    """Compact one session's working history. Raises `CompactionRefused` when there is
    nothing to work on; model failures come back as case "none" with a note."""
    session, manager, model = await _load(session_id)
    history = manager.get_history()
    if not history:
        raise CompactionRefused("There is no conversation to compact yet.")
    if not force and not manager.should_compact():
        return CompactionOutcome("none", note="The history is below the compaction trigger.")
    facts, _ = await asyncio.to_thread(facts_for, model)
    counter = token_counter(facts.tokenizer)
    config = CompactionConfig(
        compaction_trigger_tokens=manager.compaction_trigger,
        summary_budget_tokens=settings.ACDC_SUMMARY_BUDGET_TOKENS,
        verbatim_window_tokens=settings.ACDC_VERBATIM_WINDOW_TOKENS,
    )
    compactor = create_compactor(llm_client(), model, counter, config)
    trigger = FORCED_TRIGGER if force else manager.compaction_trigger
    result = await compactor.compact(history, trigger_tokens=trigger, focus=focus)
    if result is None:
        return CompactionOutcome(
            "none", note="The summary could not be made; the history is kept as it was."
        )
    if result.case == "none":
        return CompactionOutcome("none", note="Nothing to compact: the history is all recent.")
    return await _store(session_id, history, result, model, focus)


@database_sync_to_async
def _load(session_id: str) -> tuple[Session, ContextManager, str]:
    session = Session.objects.filter(pk=session_id).first()
    if session is None:
        raise CompactionRefused(f"There is no session {session_id!r}.")
    facts, _ = facts_for(chat_model(session.model))
    return session, load_manager(session, facts), smaller_model(session)


@database_sync_to_async
@transaction.atomic
def _store(
    session_id: str, history: list, result: HistoryCompaction, model: str, focus: str
) -> CompactionOutcome:
    session = Session.objects.select_for_update().get(pk=session_id)
    checkpoints.take(session, kind=Checkpoint.Kind.COMPACTION, label="Before compaction")
    facts, _ = facts_for(chat_model(session.model))
    manager = load_manager(session, facts)
    if manager.get_history() != history:
        # A turn landed while the model was summarizing: compact again next time.
        return CompactionOutcome("none", note="The conversation moved on; compaction skipped.")
    after = list(result.messages)
    kept_ids = {m.get("id") for m in after}
    replaced = [m["id"] for m in history if m.get("id") and m["id"] not in kept_ids]
    record = Compaction.objects.create(
        session=session,
        case=result.case,
        boundary_index=result.boundary.boundary_index,
        confidence=result.boundary.confidence,
        reason=result.boundary.boundary_reason,
        summary=result.summary,
        focus=focus,
        replaced_ids=replaced,
        history_before=history,
        history_after=after,
        tokens_before=result.tokens_before,
        tokens_after=result.tokens_after,
        model=model,
    )
    manager.set_history(after)
    save_manager(session_id, manager)
    note = describe(record)
    # The summary is in the event's text too, so search and grounding find it.
    services.message_append(
        session=session,
        role=Message.Role.SYSTEM,
        content=f"{note}\n\n{record.summary}".strip(),
        system_event=True,
        edit_results=[{"compaction": record.id, "summary": record.summary}],
    )
    return CompactionOutcome(
        case=record.case,
        compaction_id=record.id,
        messages_before=len(history),
        messages_after=len(after),
        tokens_before=record.tokens_before,
        tokens_after=record.tokens_after,
        summary=record.summary,
        note=note,
    )


def describe(record: Compaction) -> str:
    """One line: starts with grounding's COMPACTION_PREFIX ("History compacted")."""
    replaced = len(record.replaced_ids)
    how = (
        "summarized" if record.case == Compaction.Case.SUMMARIZE else "truncated at a topic change"
    )
    return (
        f"History compacted ({how}): {replaced} message{'s' if replaced != 1 else ''} "
        f"replaced, {record.tokens_before:,} → {record.tokens_after:,} tokens."
    )


@transaction.atomic
def undo_compaction(session_id: str, compaction_id: int | None = None) -> str:
    """Put back the working history from before the newest (or the given) compaction.
    Only the newest live compaction can be undone: later ones were built on it."""
    session = Session.objects.select_for_update().get(pk=session_id)
    live = session.compactions.filter(undone_at=None).order_by("-created_at", "-id")
    record = live.first()
    if record is None:
        raise CompactionRefused("There is no compaction to undo.")
    if compaction_id is not None and record.id != compaction_id:
        raise CompactionRefused("Only the most recent compaction can be undone.")
    facts, _ = facts_for(chat_model(session.model))
    manager = load_manager(session, facts)
    current = manager.get_history()
    if current[: len(record.history_after)] != record.history_after:
        raise CompactionRefused("The history changed since that compaction; it cannot be undone.")
    manager.set_history(record.history_before + current[len(record.history_after) :])
    save_manager(session_id, manager)
    record.undone_at = timezone.now()
    record.save(update_fields=["undone_at"])
    note = f"Compaction undone: {len(record.replaced_ids)} messages are verbatim again."
    services.message_append(
        session=session, role=Message.Role.SYSTEM, content=note, system_event=True
    )
    return note
