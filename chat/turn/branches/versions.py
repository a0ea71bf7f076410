"""Versions of a user message: branch out from one, switch between them, list them.

Invariants: at most one version of a group is in view (not set aside); a version out of
view holds its path in `branch_path`, a version in view holds none. Every change holds the
session's short lease and commits the context, so the engine's header follows the history
it now derives. Non-goals: Retry (the newest failed reply, `chat.live.turnhost`) and
checkpoint rollbacks keep their own set-aside runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from django.db import transaction
from django.db.models import Q

from chat.session import SessionBusy, SessionContext, SessionMissing, Wiring, held
from history.models import Compaction, Message, MessageImage

USER = Message.Role.USER
T = TypeVar("T")


class BranchRefused(Exception):
    """`str(exc)` is a message for the user."""


@dataclass(frozen=True)
class Branched:
    """A version begun: the id it names (`alt_of`), and for Regenerate the question to ask
    again with its images and its @-mentions as stored ("" and () for Edit, whose text,
    images and mentions the frame holds)."""

    root: str
    question: str = ""
    images: tuple[str, ...] = ()
    mentions: tuple[dict, ...] = ()


@dataclass(frozen=True)
class Version:
    """Where a message in view stands among its alternatives (1-based `number`): the
    question's distinct wordings (Edit) or the replies to the wording shown (Regenerate)."""

    number: int
    count: int
    previous: str  # the id of the version (a user message) to show instead, "" for none
    next: str  # likewise for the one after


@dataclass(frozen=True)
class Switchers:
    """The ‹ n/m › of a question in view: `question` when it was worded differently
    (Edit), `reply` when the wording shown was answered more than once (Regenerate). A
    switcher sits where its alternatives differ, so no two of its steps look the same."""

    question: Version | None
    reply: Version | None


def _locked(session_id: str, wiring: Wiring, work: Callable[..., T], *args: str) -> T:
    try:
        with held(session_id) as owner:
            return work(session_id, owner, wiring, *args)
    except SessionMissing:
        raise BranchRefused(f"There is no session {session_id!r}.") from None
    except SessionBusy:
        raise BranchRefused("A reply is being written: wait for it or press Stop.") from None


def branch_out(session_id: str, message_id: str, wiring: Wiring) -> Branched:
    """Set aside the path from a user message in view (`message_id`, or the question of
    the reply `message_id`), kept as a version."""
    return _locked(session_id, wiring, _branch_out, message_id)


@transaction.atomic
def _branch_out(session_id: str, owner: str, wiring: Wiring, message_id: str) -> Branched:
    live = Message.objects.filter(session_id=session_id, rolled_back=False)
    picked = live.filter(pk=message_id, system_event=False).first()
    if picked is None:
        raise BranchRefused("That message is no longer in view; it may have changed.")
    head = picked
    if picked.role != USER:
        head = live.filter(role=USER, system_event=False, turn_id=picked.turn_id).first()
        if head is None or picked.role != Message.Role.ASSISTANT:
            raise BranchRefused("Only a reply to one of your messages can be written again.")
    path = list(live.filter(seq__gte=head.seq).order_by("seq").values_list("id", flat=True))
    _refuse_compacted(session_id, path)
    live.filter(pk__in=path).update(rolled_back=True)
    Message.objects.filter(pk=head.pk).update(branch_path=path)
    SessionContext.open(session_id, wiring, owner=owner).commit()
    root = head.alt_of or head.id
    if picked.role == USER:
        return Branched(root)
    images = MessageImage.objects.filter(message=head).order_by("position")
    files = tuple(images.values_list("image_id", flat=True))
    return Branched(root, head.content, files, tuple(head.mentions or ()))


def answered_or_restored(
    session_id: str, root: str, turn_id: str, wiring: Wiring, mentions: tuple[dict, ...] = ()
) -> bool:
    """After a new version's turn: True when its message was stored (Regenerate's gets the
    question's chips, `mentions`: what they chose is in the context already); else (the
    turn was refused before it stored anything) the version it replaced is shown again."""
    stored = Message.objects.filter(session_id=session_id, turn_id=turn_id, role=USER)
    if stored.exists():
        if mentions:
            stored.update(mentions=list(mentions))
        return True
    group = Message.objects.filter(_in_group(root), session_id=session_id, role=USER)
    latest = group.exclude(branch_path=[]).order_by("-seq").first()
    if latest is not None and not group.filter(rolled_back=False).exists():
        _locked(session_id, wiring, _show, latest.id)
    return False


def switch(session_id: str, message_id: str, wiring: Wiring) -> None:
    """Show the version `message_id` of a user message in place of the one in view."""
    _locked(session_id, wiring, _switch, message_id)


@transaction.atomic
def _switch(session_id: str, owner: str, wiring: Wiring, message_id: str) -> None:
    target = Message.objects.filter(session_id=session_id, pk=message_id, role=USER).first()
    if target is None or not (target.alt_of or _has_versions(target)):
        raise BranchRefused("There is no such version of this message.")
    if not target.rolled_back:
        return  # already in view: a second tab pressed first
    root = target.alt_of or target.id
    group = Message.objects.filter(_in_group(root), session_id=session_id, role=USER)
    shown = group.filter(rolled_back=False).first()
    if shown is None:
        raise BranchRefused("This message is not in view any more; it may have changed.")
    live = Message.objects.filter(session_id=session_id, rolled_back=False)
    path = list(live.filter(seq__gte=shown.seq).order_by("seq").values_list("id", flat=True))
    _refuse_compacted(session_id, path + list(target.branch_path))
    live.filter(pk__in=path).update(rolled_back=True)
    Message.objects.filter(pk=shown.pk).update(branch_path=path)
    _show(session_id, owner, wiring, target.id)


def _show(session_id: str, owner: str, wiring: Wiring, head_id: str) -> None:
    head = Message.objects.get(pk=head_id)
    Message.objects.filter(session_id=session_id, pk__in=head.branch_path).update(rolled_back=False)
    Message.objects.filter(pk=head.pk).update(branch_path=[])
    SessionContext.open(session_id, wiring, owner=owner).commit()


def _in_group(root: str) -> Q:
    return Q(pk=root) | Message.versions_of(root)


def _has_versions(message: Message) -> bool:
    return Message.objects.filter(Message.versions_of(message.id)).exists()


def _refuse_compacted(session_id: str, ids: Iterable[str]) -> None:
    wanted = set(ids)
    live = Compaction.objects.filter(session_id=session_id, undone_at=None)
    for replaced in live.values_list("replaced_ids", flat=True):
        if wanted.intersection(replaced or ()):
            raise BranchRefused(
                "A compaction summarised part of this conversation from here on: "
                "undo the compaction first."
            )


def hidden_ids(rows: Iterable[Message]) -> set[str]:
    """The messages of versions out of view: the page does not fold them in, the
    switcher brings them back."""
    return {i for m in rows if m.rolled_back and m.branch_path for i in m.branch_path}


def version_map(rows: list[Message]) -> dict[str, Switchers]:
    """The switchers of each user message in view that has more than one version, by
    its id."""
    groups: dict[str, list[Message]] = {}
    for m in rows:
        if m.role == USER and not m.system_event:
            groups.setdefault(m.alt_of or m.id, []).append(m)
    found: dict[str, Switchers] = {}
    for versions in groups.values():
        shown = [m for m in versions if not m.rolled_back]
        if len(versions) < 2 or len(shown) != 1:
            continue
        wordings: dict[str, list[Message]] = {}
        for m in versions:
            wordings.setdefault(m.content, []).append(m)
        # A wording stands for its newest version; its replies are its versions.
        heads = [shown[0] if shown[0] in same else same[-1] for same in wordings.values()]
        same = wordings[shown[0].content]
        found[shown[0].id] = Switchers(_step(heads, shown[0]), _step(same, shown[0]))
    return found


def _step(choices: list[Message], shown: Message) -> Version | None:
    if len(choices) < 2:
        return None
    at = choices.index(shown)
    return Version(
        number=at + 1,
        count=len(choices),
        previous=choices[at - 1].id if at else "",
        next=choices[at + 1].id if at + 1 < len(choices) else "",
    )
