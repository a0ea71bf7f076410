"""Fork: a new session that starts with another's history up to one message.

The new session gets copies of the messages in view up to and including that message
(same numbers, same turns, new ids), their images, the live compactions that cover only
them (references renamed), the file selection, the context header and the layout row.
So its first request repeats the parent's prefix up to that message byte for byte, and a
provider's prompt cache serves it. The parent is not changed. Non-goals: copying versions
out of view, checkpoints and token usage (they describe the parent's past).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from chat.session import SessionBusy, SessionMissing, held
from chat.turn.branches.versions import BranchRefused
from history.ids import new_message_id
from history.models import (
    Compaction,
    Message,
    MessageImage,
    Session,
    SessionLayout,
    SessionObject,
)

COPIED = ("role", "content", "status", "error", "turn_id", "usage", "model", "files")
COPIED_TOO = ("files_modified", "edit_results", "system_event", "pinned", "mentions")


def fork(session_id: str, message_id: str) -> Session:
    """The new session, forked from `session_id` at its message `message_id` (in view)."""
    try:
        with held(session_id):
            return _fork(session_id, message_id)
    except SessionMissing:
        raise BranchRefused(f"There is no session {session_id!r}.") from None
    except SessionBusy:
        raise BranchRefused("A reply is being written: wait for it or press Stop.") from None


@transaction.atomic
def _fork(session_id: str, message_id: str) -> Session:
    parent = Session.objects.get(pk=session_id)
    live = parent.messages.filter(rolled_back=False)
    at = live.filter(pk=message_id).first()
    if at is None:
        raise BranchRefused("That message is no longer in view; it may have changed.")
    rows = list(live.filter(seq__lte=at.seq).order_by("seq"))
    renamed = {m.id: new_message_id() for m in rows}
    compactions = _covered(parent, renamed)
    child = Session.objects.create(
        repository=parent.repository,
        title=f"Fork of {parent.display_title}"[:200],
        model=parent.model,
        context_state=dict(parent.context_state or {}),
        grounding=parent.grounding,
        endless=dict(parent.endless or {}),
        auto_apply=parent.auto_apply,
        check_command=parent.check_command,
    )
    if parent.layout_id:
        layout = parent.layout
        child.layout = SessionLayout.objects.create(
            session=child, digest=layout.digest, body=layout.body
        )
        child.save(update_fields=["layout"])
    Message.objects.bulk_create(
        Message(id=renamed[m.id], session=child, seq=m.seq, **_fields(m)) for m in rows
    )
    MessageImage.objects.bulk_create(
        MessageImage(
            message_id=renamed[link.message_id], image_id=link.image_id, position=link.position
        )
        for link in MessageImage.objects.filter(message_id__in=renamed)
    )
    SessionObject.objects.bulk_create(
        SessionObject(
            session=child,
            object_id=link.object_id,
            in_pool=link.in_pool,
            active=link.active,
            pinned=link.pinned,
            outline=link.outline,
        )
        for link in SessionObject.objects.filter(session=parent).order_by("indexed_at", "id")
    )
    for record in compactions:
        record.pk = None
        record.session = child
        record.replaced_ids = [renamed[i] for i in record.replaced_ids]
        record.history_before = _renamed(record.history_before, renamed)
        record.history_after = _renamed(record.history_after, renamed)
        record.save()
    return child


def _fields(message: Message) -> dict[str, Any]:
    return {name: getattr(message, name) for name in COPIED + COPIED_TOO}


def _covered(parent: Session, renamed: dict[str, str]) -> list[Compaction]:
    """The live compactions, all of which must lie within the copied messages."""
    records = list(Compaction.objects.filter(session=parent, undone_at=None).order_by("id"))
    for record in records:
        if not set(record.replaced_ids or ()) <= renamed.keys():
            raise BranchRefused(
                "A compaction after this message summarised part of the conversation: "
                "fork from a later message, or undo the compaction first."
            )
    return records


def _renamed(value: Any, renamed: dict[str, str]) -> Any:
    """A stored history with its `{"ref": message id}` references pointing at the copies."""
    if isinstance(value, list):
        return [_renamed(item, renamed) for item in value]
    if isinstance(value, dict):
        if set(value) == {"ref"} and value["ref"] in renamed:
            return {"ref": renamed[value["ref"]]}
        return {key: _renamed(item, renamed) for key, item in value.items()}
    return value
