"""Checkpoints and rollback of a session's context (seed 003, issue 6 item 5).

A checkpoint copies what decides the next prompt: the saved engine state (working history,
cache layout, texts) and the session's object sets (pool, active, pinned). It is taken
every `ACDC_CHECKPOINT_EVERY` turns, before every compaction, and on demand. Rolling back
restores both; messages stored after the checkpoint stay in the store, marked as rolled
back, so the history browser and search still have them.

Non-goals: files on disk (acdc never writes the repository), scheduling (the turn does).
"""

from __future__ import annotations

from django.conf import settings
from django.db import transaction

from history import services
from history.models import Checkpoint, Message, Session, SessionObject

MAX_LABEL = 200


class RollbackRefused(Exception):
    """`str(exc)` is a message for the user."""


def _sets(session: Session) -> list[dict]:
    return list(
        SessionObject.objects.filter(session=session)
        .order_by("indexed_at", "id")
        .values("object_id", "in_pool", "active", "pinned")
    )


def take(session: Session, *, kind: str = Checkpoint.Kind.MANUAL, label: str = "") -> Checkpoint:
    last = session.messages.order_by("-seq").values_list("seq", flat=True).first()
    return Checkpoint.objects.create(
        session=session,
        label=(label or "").strip()[:MAX_LABEL],
        kind=kind,
        context_state=dict(session.context_state or {}),
        object_sets=_sets(session),
        last_seq=last if last is not None else 0,
    )


def take_if_due(session_id: str) -> Checkpoint | None:
    """After a turn: a checkpoint every N completed turns (N = ACDC_CHECKPOINT_EVERY)."""
    every = settings.ACDC_CHECKPOINT_EVERY
    if not every:
        return None
    session = Session.objects.get(pk=session_id)
    turns = session.messages.filter(role=Message.Role.USER, system_event=False).count()
    if turns == 0 or turns % every:
        return None
    return take(session, kind=Checkpoint.Kind.AUTO, label=f"After {turns} turns")


def listing(session: Session) -> list[Checkpoint]:
    return list(session.checkpoints.order_by("-created_at", "-id"))


@transaction.atomic
def rollback(session_id: str, checkpoint_id: int) -> str:
    """Restore the checkpoint's context state and sets; returns the system event's text."""
    session = Session.objects.select_for_update().filter(pk=session_id).first()
    if session is None:
        raise RollbackRefused(f"There is no session {session_id!r}.")
    checkpoint = Checkpoint.objects.filter(pk=checkpoint_id).first()
    if checkpoint is None:
        raise RollbackRefused("There is no such checkpoint.")
    if checkpoint.session_id != session.id:
        raise RollbackRefused("That checkpoint belongs to another session.")
    take(session, kind=Checkpoint.Kind.MANUAL, label="Before rollback")
    session.context_state = dict(checkpoint.context_state)
    session.save(update_fields=["context_state"])
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
