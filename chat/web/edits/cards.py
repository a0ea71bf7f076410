"""The diff cards of a reply's edits, drawn from its `PendingEdit` rows.

One card per file the reply's edits touch: its path, +/− counts, what became of it
(pending, applied, rejected, conflict, failed, undone) and the unified diff in hunks. A
pending card shows the change as it would apply to the file now (so its hunks are the ones
`accept(hunks=…)` numbers); an applied or undone one the change acdc wrote (the versions
before and after); a rejected, failed or conflicting one the edit's own old and new text,
and a conflict also the file as it is now. A pending edit that no longer applies to the
file on disk is shown as the conflict it would become. Reads the database and the disk:
call it from a thread. Non-goals: deciding anything (`chat.repo.edits`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.template.loader import render_to_string

from chat.repo import edittools, git, sessionsets
from chat.repo.edits import applying, disk
from chat.web.panels.fileupdates import picker_update
from contextcore.edits import diff_hunks
from contextcore.edits.diff import Hunk
from history.models import Message, PendingEdit, Session

Status = PendingEdit.Status
FILE_PREVIEW_CHARS = 6000
# What a card says first, in this order of precedence when its rows differ.
_PRECEDENCE = ("pending", "conflict", "failed", "applied", "undone", "rejected")
LABELS = {
    "pending": "Pending review",
    "applied": "Applied",
    "rejected": "Rejected",
    "conflict": "Conflict",
    "failed": "Failed",
    "undone": "Undone",
}


@dataclass
class Card:
    path: str
    status: str
    rows: list[PendingEdit]
    hunks: list[Hunk] = field(default_factory=list)
    kind: str = ""  # "new file" | "deleted file" | ""
    reason: str = ""  # why it failed or conflicts
    expected: str = ""  # conflict: the text the edit looked for
    now: str | None = None  # conflict: the file as it is on disk

    @property
    def label(self) -> str:
        return LABELS[self.status]

    @property
    def added(self) -> int:
        return sum(h.added for h in self.hunks)

    @property
    def removed(self) -> int:
        return sum(h.removed for h in self.hunks)

    @property
    def results(self) -> list[str]:
        """Each row's result line once (rows applied as one set share theirs)."""
        return list(dict.fromkeys(row.result for row in self.rows if row.result))

    @property
    def numbered(self) -> list[tuple[int, Hunk]]:
        return list(enumerate(self.hunks, 1))


def cards_for(message: Message) -> list[Card]:
    """The message's cards, in the order its edits were proposed."""
    return _cards(message.edits.all(), message.session)


def _cards(rows, session: Session) -> list[Card]:
    groups: dict[str, list[PendingEdit]] = {}
    for row in rows.select_related("version_before", "version_after").order_by("id"):
        groups.setdefault(row.path, []).append(row)
    if not groups:
        return []
    repo = sessionsets.repository()
    return [_card(session, path, rows, repo) for path, rows in groups.items()]


def _card(session: Session, path: str, rows: list[PendingEdit], repo) -> Card:
    statuses = {row.status for row in rows}
    status = next(s for s in _PRECEDENCE if s in statuses)
    card = Card(path, status, rows)
    if status == Status.PENDING:
        _pending(card, session, repo)
    elif status in (Status.APPLIED, Status.UNDONE):
        done = [row for row in rows if row.status == status]
        before, after = done[0].version_before, done[-1].version_after
        _diff(card, before.content if before else None, after.content if after else None)
    else:
        _proposed(card, [row for row in rows if row.status == status], repo)
    return card


def _pending(card: Card, session: Session, repo) -> None:
    waiting = [row for row in card.rows if row.status == Status.PENDING]
    changes = applying.preview(session, waiting, repo=repo)
    if changes:
        _, before, after = changes[0]
        _diff(card, before, after)
        return
    # It would not apply to the file as it is now: the conflict an Accept would record.
    card.status = Status.CONFLICT
    _proposed(card, waiting, repo)
    card.reason = card.reason or f"{card.path} changed on disk since the model read it."


def _diff(card: Card, before: str | None, after: str | None) -> None:
    card.hunks = diff_hunks(before, after)
    card.kind = "new file" if before is None else "deleted file" if after is None else ""


def _proposed(card: Card, rows: list[PendingEdit], repo) -> None:
    """The edits' own texts, for a change that was not (or could not be) made."""
    for row in rows:
        if row.kind == PendingEdit.Kind.DELETE:
            card.kind = "deleted file"
            continue
        old = row.old_text if row.kind == PendingEdit.Kind.REPLACE else None
        card.kind = "new file" if old is None and not row.overwrite else card.kind
        card.hunks += diff_hunks(old, row.new_text)
    card.reason = "\n".join(row.result for row in rows if row.result and row.status != "pending")
    if card.status == Status.CONFLICT:
        card.expected = "\n\n".join(row.old_text for row in rows if row.old_text)
        try:
            card.now = disk.target(repo, card.path).text
        except disk.EditRefused as exc:
            card.reason = card.reason or str(exc)
        if card.now is not None and len(card.now) > FILE_PREVIEW_CHARS:
            card.now = card.now[:FILE_PREVIEW_CHARS] + "\n…"


def edits_context(message: Message, *, oob: bool = False, note: str = "") -> dict:
    cards = cards_for(message)
    statuses = {card.status for card in cards}
    return {
        "message_id": message.id,
        "section_id": f"edits-{message.id}",
        "cards": cards,
        "any_pending": "pending" in statuses,
        "any_applied": "applied" in statuses,
        "oob": oob,
        "note": note,
    }


def render_edits(message: Message, *, oob: bool = False, note: str = "") -> str:
    """The reply's edits section (`edits-<message id>`); empty when edits are off."""
    if not edittools.enabled():
        return ""
    return render_to_string("chat/_edits.html", edits_context(message, oob=oob, note=note))


def latest_reply_frames(session_id: str) -> list[str]:
    """The edits frame of the session's newest reply once its turn is over (the finished
    reply has an empty `edits-<id>` for it), and the git badges of the files its edits
    wrote (Auto-apply); none without edits."""
    message = (
        Message.objects.filter(session_id=session_id, role=Message.Role.ASSISTANT)
        .order_by("-seq")
        .first()
    )
    if message is None or not message.edits.exists():
        return []
    return [render_edits(message, oob=True), *_written_badges(message.edits.all())]


def turn_frames(turn_id: str) -> list[str]:
    """The cards of a reply still streaming, and the git badges of the files written."""
    rows = PendingEdit.objects.filter(turn_id=turn_id, message=None)
    return [render_turn_edits(turn_id, oob=True), *_written_badges(rows)]


def _written_badges(rows) -> list[str]:
    written = set(rows.filter(status=Status.APPLIED).values_list("path", flat=True))
    return [badges_message(written)] if written else []


def badges_message(paths: Iterable[str]) -> str:
    """A Files panel update with the git badges of `paths` ("" where git sees no change):
    the watcher's events carry none."""
    repo = Path(settings.ACDC_REPO)
    now = git.status(repo)
    return picker_update(repo, badges={path: now.get(path, "") for path in paths})


def render_turn_edits(turn_id: str, *, oob: bool = False) -> str:
    """The edits a reply still streaming has proposed (`msg-<turn>-edits`), as read-only
    cards: they are accepted or rejected once the reply is stored and its cards drawn."""
    if not edittools.enabled():
        return ""
    rows = PendingEdit.objects.filter(turn_id=turn_id, message=None)
    first = rows.select_related("session").first()
    cards = _cards(rows, first.session) if first is not None else []
    context = {"section_id": f"msg-{turn_id}-edits", "cards": cards, "live": True, "oob": oob}
    return render_to_string("chat/_edits.html", context)


def pending_frames(session_id: str, paths: list[str]) -> str:
    """The edits sections, drawn again, of the session's replies with edits pending on
    `paths` (files that changed on disk: a pending card may now be a conflict)."""
    if not edittools.enabled():
        return ""
    waiting = PendingEdit.objects.filter(
        session_id=session_id, status=Status.PENDING, path__in=paths
    ).exclude(message=None)
    ids = set(waiting.values_list("message_id", flat=True))
    replies = Message.objects.filter(pk__in=ids).select_related("session").order_by("seq")
    return "".join(render_edits(message, oob=True) for message in replies)
