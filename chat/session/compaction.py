"""Compaction in the chat (issue 6): after the response, visible, persistent, undoable.

`compact_session` runs layer 1 for one session with the smaller model: it takes a
checkpoint, asks `contextcore.conversation.compaction.HistoryCompactor` for the compacted working
history, and stores a `Compaction` record (case, boundary, confidence, summary, the
message ids no longer verbatim, tokens before and after, and the new history as
references to the messages it keeps plus the summary it made) and a system event in the
chat. Nothing is deleted: the store keeps every message; only what the model sees
changes, and `undo_compaction` marks the record undone, which puts the previous working
history back (the history is derived from the rows and the live records). Reload and
restart derive the same history, so the detector is never asked twice. A summary that
could not be made (a failed or empty answer, or one that only repeats a message of the
history) is said as such: below twice the trigger, and always for Compact now, nothing
changes (`_no_summary`); past it the oldest exchanges are dropped without a summary
(`SUMMARY_FAILED`), and the page says that, never "summarized". When the smaller
model is the chat's own model, the detector and summarizer requests reuse the chat's cached
prefix (its system prompt, files and history as last sent) with their instruction at the
end, where reading it at the model's cache price costs less than a fresh transcript.

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

from chat.llm.facts import DRY_RUN_MODEL, OFFLINE_MODELS
from chat.llm.runtime import chat_model
from chat.session import (
    SessionBusy,
    SessionContext,
    SessionMissing,
    Wiring,
    checkpoints,
    held,
    hud,
    outgoing,
    trail,
    working,
)
from chat.session.hud import COMPACTION_CASES
from contextcore.conversation.compaction import (
    CompactionConfig,
    CompactionPreview,
    HistoryCompaction,
    create_compactor,
)
from contextcore.prompt.siderequest import SidePrefix
from history.models import Checkpoint, Compaction, Message, Session

log = logging.getLogger(__name__)
# The record's reason when the summary failed and acdc truncated instead (past twice the
# trigger): the page names what was done, never "a topic change".
SUMMARY_FAILED = "The summary could not be made; the oldest exchanges were dropped instead."
FORCED_TRIGGER = 1  # "Compact now": any history above the verbatim window qualifies
SIDE_ROOM_TOKENS = 8_000  # instruction, index of up to 50 messages, and the answer


def side_prefix(manager, tools, facts, counter, history=None) -> SidePrefix | None:
    """The chat's cached prefix for a side request to the chat's own model (its `tools`
    and the request `manager` would send next, assembled from `history` when given, up to
    its last cache breakpoint), when it leaves room for the instruction and index."""
    prefix = manager.side_prefix(tools, history)
    if prefix and prefix.tokens(counter) <= facts.input_budget - SIDE_ROOM_TOKENS:
        return prefix
    return None


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
    hud: dict | None = None  # the HUD figures saved with the compacted history

    @property
    def changed(self) -> bool:
        return self.case in ("truncate", "summarize")


def smaller_model(session: Session) -> str:
    return settings.ACDC_SMALLER_MODEL or chat_model(session.model)


def needs_compaction(session_id: str, wiring: Wiring) -> bool:
    """Past the trigger (for callers without a turn's context at hand)."""
    return _open(session_id, wiring).manager.should_compact()


async def compact_session(
    session_id: str,
    wiring: Wiring,
    *,
    focus: str = "",
    force: bool = False,
    ctx: SessionContext | None = None,
) -> CompactionOutcome:
    """Compact one session's working history (from `ctx` when the turn hands its context
    over, else from a context opened with `wiring`). Raises `CompactionRefused` when there
    is nothing to work on; model failures come back as case "none" with a note."""
    if ctx is None:
        ctx = await database_sync_to_async(_open)(session_id, wiring)
    manager = ctx.manager
    history = manager.get_history()
    if not history:
        raise CompactionRefused("There is no conversation to compact yet.")
    if not force and not manager.should_compact():
        return CompactionOutcome("none", note="The history is below the compaction trigger.")
    model = smaller_model(ctx.session)
    runtime = ctx.runtime
    facts, _ = await asyncio.to_thread(runtime.facts, model)
    counter = runtime.counter(facts.tokenizer)
    config = CompactionConfig(
        compaction_trigger_tokens=manager.compaction_trigger,
        summary_budget_tokens=settings.ACDC_SUMMARY_BUDGET_TOKENS,
        verbatim_window_tokens=settings.ACDC_VERBATIM_WINDOW_TOKENS,
    )
    compactor = create_compactor(outgoing.client(runtime.client), model, counter, config)
    trigger = FORCED_TRIGGER if force else manager.compaction_trigger
    # Sent to the chat's own model, the side requests reuse its cached prefix.
    prefix = side_prefix(manager, ctx.tools, facts, counter) if model == ctx.model else None
    if model == DRY_RUN_MODEL:  # its answer is a report, never a summary: say what it would send
        return dry_run(
            compactor.preview(history, trigger_tokens=trigger, focus=focus, prefix=prefix)
        )
    result = await compactor.compact(
        history,
        trigger_tokens=trigger,
        focus=focus,
        prefix=prefix,
        # Compact now's trigger is 1 token: "past twice the trigger" would always hold,
        # and a failed summary would drop all but the recent exchanges. Only the automatic
        # compaction, past twice the real trigger, truncates instead of a summary.
        fallback=model not in OFFLINE_MODELS and not force,
    )
    if result is None:
        return CompactionOutcome("none", note=_no_summary(model))
    if result.case == "none":
        return CompactionOutcome("none", note="Nothing to compact: the history is all recent.")
    try:
        return await database_sync_to_async(_store_held)(ctx, history, result, model, focus)
    except SessionBusy:
        return CompactionOutcome("none", note="A reply is being written; compaction skipped.")


def dry_run(preview: CompactionPreview | None) -> CompactionOutcome:
    """The outcome of a compaction with acdc/dry-run: nothing sent, nothing changed."""
    if preview is None:
        return CompactionOutcome("none", note="Nothing to compact: the history is all recent.")
    many = "s" if preview.messages != 1 else ""
    return CompactionOutcome(
        "none",
        note=(
            f"Dry run: compaction would send {preview.tokens:,} tokens to summarise "
            f"{preview.messages} message{many}; nothing was changed."
        ),
    )


def _no_summary(model: str) -> str:
    note = (
        "The summary could not be made (the model's answer failed, was empty or only "
        "repeated an earlier message), so nothing was compacted: the model still sees the "
        "whole history, and the next compaction tries again."
    )
    if model in OFFLINE_MODELS:  # acdc/fake writes a summary only when a test scripts one
        note += f" {model} is an offline model: it writes no summary unless one is scripted."
    return note


def _store_held(ctx, history, result, model, focus) -> CompactionOutcome:
    with held(ctx.session_id) as owner:
        return _store(ctx, history, result, model, focus, owner)


def _open(session_id: str, wiring: Wiring) -> SessionContext:
    try:
        return SessionContext.open(session_id, wiring)
    except SessionMissing:
        raise CompactionRefused(f"There is no session {session_id!r}.") from None


@transaction.atomic
def _store(
    ctx: SessionContext,
    history: list,
    result: HistoryCompaction,
    model: str,
    focus: str,
    owner: str,
) -> CompactionOutcome:
    """Under the lease: the record, the checkpoint before it and the event, committed with
    the header and the HUD. The context the compaction read goes on unless something was
    written to the session meanwhile; then it is read again and must hold `history`."""
    fresh = ctx
    if not ctx.unchanged():
        fresh = SessionContext.open(ctx.session_id, ctx)
        if fresh.manager.get_history() != history:
            # A turn landed while the model was summarizing: compact again next time.
            note = "The conversation moved on; compaction skipped."
            return CompactionOutcome("none", note=note)
    fresh.owner = owner
    session = fresh.session
    checkpoints.take(session, kind=Checkpoint.Kind.COMPACTION, label="Before compaction")
    after = list(result.messages)
    kept_ids = {m.get("id") for m in after}
    replaced = [m["id"] for m in history if m.get("id") and m["id"] not in kept_ids]
    record = Compaction.objects.create(
        session=session,
        case=result.case,
        boundary_index=result.boundary.boundary_index,
        confidence=result.boundary.confidence,
        reason=SUMMARY_FAILED if result.summary_failed else result.boundary.boundary_reason,
        summary=result.summary,
        focus=focus,
        replaced_ids=replaced,
        after=working.as_refs(after, history),
        upto_seq=fresh.last_seq,
        tokens_before=result.tokens_before,
        tokens_after=result.tokens_after,
        model=model,
    )
    fresh.manager.set_history(after)
    fresh.history = after
    fresh.compactions.append(record)
    trail.refresh(fresh)  # in every request from now on, and in the HUD below
    # The turn's own breakdown was of the history before: the HUD previews the next request.
    fresh.breakdown = None
    note = describe(record)
    # The summary is in the event's text too, so search and grounding find it.
    fresh.append(
        role=Message.Role.SYSTEM,
        content=f"{note}\n\n{record.summary}".strip(),
        system_event=True,
        edit_results=[{"compaction": record.id, "summary": record.summary}],
    )
    data = hud.figures(fresh)
    fresh.commit(hud=data)
    fresh.owner = ""  # the lease is the caller's to give back
    return CompactionOutcome(
        case=record.case,
        compaction_id=record.id,
        messages_before=len(history),
        messages_after=len(after),
        tokens_before=record.tokens_before,
        tokens_after=record.tokens_after,
        summary=record.summary,
        note=note,
        hud=data,
    )


def describe(record: Compaction) -> str:
    """One line: starts with grounding's COMPACTION_PREFIX ("History compacted")."""
    replaced = len(record.replaced_ids)
    how = (
        "summarized" if record.case == Compaction.Case.SUMMARIZE else "truncated at a topic change"
    )
    if record.reason == SUMMARY_FAILED:
        how = (
            "the summary could not be made, so the oldest exchanges were dropped from what "
            "the model sees, with no summary; the store keeps them"
        )
    return (
        f"History compacted ({how}): {replaced} message{'s' if replaced != 1 else ''} "
        f"replaced, {record.tokens_before:,} → {record.tokens_after:,} tokens."
    )


def undo_compaction(session_id: str, wiring: Wiring, compaction_id: int | None = None) -> str:
    """Put back the working history from before the newest (or the given) compaction.
    Only the newest live compaction can be undone: later ones were built on it."""
    try:
        with held(session_id) as owner:
            return _undo(session_id, compaction_id, owner, wiring)
    except SessionBusy:
        raise CompactionRefused("A reply is being written: undo when it has finished.") from None


@transaction.atomic
def _undo(session_id: str, compaction_id: int | None, owner: str, wiring: Wiring) -> str:
    session = Session.objects.get(pk=session_id)
    live = session.compactions.filter(undone_at=None).order_by("-created_at", "-id")
    record = live.filter(case__in=COMPACTION_CASES).first()
    if record is None:
        raise CompactionRefused("There is no compaction to undo.")
    if compaction_id is not None and record.id != compaction_id:
        raise CompactionRefused("Only the most recent compaction can be undone.")
    current = SessionContext.open(session_id, wiring).manager.get_history()
    legacy = record.after is None
    if live.first() != record or (
        legacy and current[: len(record.history_after)] != record.history_after
    ):
        raise CompactionRefused("The history changed since that compaction; it cannot be undone.")
    record.undone_at = timezone.now()
    record.save(update_fields=["undone_at"])
    ctx = SessionContext.open(session_id, wiring, owner=owner)
    if legacy:  # a record from before references: its saved history comes back as a rewrite
        before = [*record.history_before, *current[len(record.history_after) :]]
        Compaction.objects.create(
            session=session,
            case=Compaction.Case.REWRITE,
            reason="Undo of a compaction saved before references.",
            after=working.as_refs(before, ctx.manager.get_history()),
            upto_seq=ctx.last_seq,
        )
        ctx = SessionContext.open(session_id, wiring, owner=owner)
    ctx.commit()  # the engine's header follows the history it now derives
    note = f"Compaction undone: {len(record.replaced_ids)} messages are verbatim again."
    ctx.append(role=Message.Role.SYSTEM, content=note, system_event=True)
    return note
