"""Checkpoints and rollback of a session's context (seed 003, issue 6 item 5).

A checkpoint records positions, not copies: the last message number, the compactions live
then, the object sets (pool, active, pinned) and the small context header with the name
of its layout row. It is taken every `ACDC_CHECKPOINT_EVERY` turns, before every
compaction, and on demand. Rolling back marks the messages after it rolled back (kept in
the store, the history browser and search), brings back the compactions live then and
the header; the working history follows, since it is derived from those rows. Session
settings (Endless, related context, model) are columns of their own and stay as they are.
With edits on, a rollback may also (or only) give the files acdc changed since the
checkpoint their content back (`chat.repo.edits.restore`: new versions, refused per file
when the file changed since acdc wrote it). Non-goals: scheduling (the turn does).
"""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from chat.repo import edittools, indexing
from chat.repo.edits.restore import restore
from chat.session import SessionBusy, SessionContext, SessionMissing, Wiring, held
from history import services
from history.models import Checkpoint, Compaction, Message, Session, SessionObject

MAX_LABEL = 200
SCOPES = ("conversation", "files", "both")


class RollbackRefused(Exception):
    """`str(exc)` is a message for the user."""


def _sets(session: Session) -> list[dict]:
    return list(
        SessionObject.objects.filter(session=session)
        .order_by("indexed_at", "id")
        .values("object_id", "in_pool", "active", "pinned")
    )


def take(
    session: Session,
    *,
    kind: str = Checkpoint.Kind.MANUAL,
    label: str = "",
    last_seq: int | None = None,
    compactions: list[int] | None = None,
) -> Checkpoint:
    if last_seq is None:
        last_seq = session.messages.order_by("-seq").values_list("seq", flat=True).first()
    if compactions is None:
        live = Compaction.objects.filter(session=session, undone_at=None).order_by("id")
        compactions = list(live.values_list("id", flat=True))
    header = dict(session.context_state or {})
    header["layout_id"] = session.layout_id
    return Checkpoint.objects.create(
        session=session,
        label=(label or "").strip()[:MAX_LABEL],
        kind=kind,
        context_state=header,
        object_sets=_sets(session),
        last_seq=max(last_seq or 0, 0),
        compactions=compactions,
    )


def take_if_due(ctx: SessionContext) -> Checkpoint | None:
    """After a turn: a checkpoint every N turns (N = ACDC_CHECKPOINT_EVERY), from what the
    turn's context already holds."""
    every = settings.ACDC_CHECKPOINT_EVERY
    turns = ctx.user_turns
    if not every or turns == 0 or turns % every:
        return None
    return take(
        ctx.session,
        kind=Checkpoint.Kind.AUTO,
        label=f"After {turns} turns",
        last_seq=ctx.last_seq,
        compactions=[c.id for c in ctx.compactions],
    )


def listing(session: Session) -> list[Checkpoint]:
    return list(session.checkpoints.order_by("-created_at", "-id"))


def rollback(
    session_id: str,
    checkpoint_id: int,
    scope: str = "conversation",
    *,
    repo: indexing.Repository,
) -> str:
    """Restore the checkpoint's context state and sets ("conversation"), the files acdc
    changed since ("files", edits on: in `repo`), or both; returns the system event's text."""
    if scope not in SCOPES or (scope != "conversation" and not edittools.enabled()):
        raise RollbackRefused("Choose what to roll back: the conversation, files or both.")
    try:
        with held(session_id):
            note = _rollback(session_id, checkpoint_id) if scope != "files" else ""
            if scope != "conversation":
                note = _rollback_files(session_id, checkpoint_id, note, repo)
            return note
    except SessionMissing:
        raise RollbackRefused(f"There is no session {session_id!r}.") from None
    except SessionBusy:
        raise RollbackRefused(
            "A reply is being written: wait for it (or press Stop) first."
        ) from None


def _found(session_id: str, checkpoint_id: int) -> tuple[Session, Checkpoint]:
    session = Session.objects.filter(pk=session_id).first()
    if session is None:
        raise RollbackRefused(f"There is no session {session_id!r}.")
    checkpoint = Checkpoint.objects.filter(pk=checkpoint_id).first()
    if checkpoint is None:
        raise RollbackRefused("There is no such checkpoint.")
    if checkpoint.session_id != session.id:
        raise RollbackRefused("That checkpoint belongs to another session.")
    return session, checkpoint


def _rollback_files(
    session_id: str, checkpoint_id: int, note: str, repo: indexing.Repository
) -> str:
    """The files acdc changed since the checkpoint, back as they were: a note of one line
    per file, after the conversation's note when both were rolled back."""
    session, checkpoint = _found(session_id, checkpoint_id)
    done = restore(session, checkpoint, repo=repo)
    lines = done.lines or ["acdc changed no files since this checkpoint."]
    text = "Files rolled back to the checkpoint:\n" + "\n".join(f"- {line}" for line in lines)
    services.message_append(
        session=session, role=Message.Role.SYSTEM, content=text, system_event=True
    )
    return f"{note}\n{text}" if note else text


@transaction.atomic
def _rollback(session_id: str, checkpoint_id: int) -> str:
    session, checkpoint = _found(session_id, checkpoint_id)
    take(session, kind=Checkpoint.Kind.AUTO, label="Before rollback")  # not the person's
    header = dict(checkpoint.context_state)
    layout_id = header.pop("layout_id", session.layout_id)
    session.context_state = header
    session.layout_id = layout_id
    session.save(update_fields=["context_state", "layout"])
    if checkpoint.compactions is not None:
        live = set(checkpoint.compactions)
        records = Compaction.objects.filter(session=session)
        records.filter(pk__in=live).update(undone_at=None)
        records.exclude(pk__in=live).filter(undone_at=None).update(undone_at=timezone.now())
    saved = {row["object_id"]: row for row in checkpoint.object_sets}
    for link in SessionObject.objects.filter(session=session):
        row = saved.get(link.object_id)
        # Objects met after the checkpoint stay in the index (it only grows) but leave
        # the pool's active part; everything else gets its saved flags back.
        link.in_pool = row["in_pool"] if row else link.in_pool
        link.active = row["active"] if row else False
        link.pinned = row["pinned"] if row else False
        link.save(update_fields=["in_pool", "active", "pinned"])
    later = session.messages.filter(seq__gt=checkpoint.last_seq, rolled_back=False)
    count = later.exclude(system_event=True).count()
    later.update(rolled_back=True)
    name = checkpoint.label or checkpoint.created_at.strftime("%Y-%m-%d %H:%M")
    note = (
        f"Rolled back to checkpoint “{name}”: {count} later messages set aside (kept in history)."
    )
    services.message_append(
        session=session, role=Message.Role.SYSTEM, content=note, system_event=True
    )
    return note


def set_aside_last(session_id: str, message_id: str, wiring: Wiring) -> str:
    """Edit and resend: the session's last user message (`message_id`) and everything
    after it (its reply, tool calls, notes) are set aside as a rollback does, kept in the
    store and in History, so the edited message is answered from the history before it.
    Returns the note it adds; refused (`RollbackRefused`) unless it is the last message
    the person sent, or while a reply is being written."""
    try:
        with held(session_id) as owner:
            return _set_aside_last(session_id, message_id, owner, wiring)
    except SessionMissing:
        raise RollbackRefused(f"There is no session {session_id!r}.") from None
    except SessionBusy:
        raise RollbackRefused("A reply is being written: press Stop first.") from None


@transaction.atomic
def _set_aside_last(session_id: str, message_id: str, owner: str, wiring: Wiring) -> str:
    mine = Message.objects.filter(
        session_id=session_id, role=Message.Role.USER, system_event=False, rolled_back=False
    )
    last = mine.order_by("-seq").first()
    if last is None or last.id != message_id:
        raise RollbackRefused("Only your last message can be edited; it may have changed.")
    later = Message.objects.filter(session_id=session_id, seq__gte=last.seq, rolled_back=False)
    later.update(rolled_back=True)
    ctx = SessionContext.open(session_id, wiring, owner=owner)
    ctx.commit()  # the engine's header follows the history it now derives
    note = (
        "Your last message was edited: the earlier version and its reply "
        "are set aside (kept in History)."
    )
    ctx.append(role=Message.Role.SYSTEM, content=note, system_event=True)
    return note
