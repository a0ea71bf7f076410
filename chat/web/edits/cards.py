"""The diff cards of a reply's edits, drawn from its `PendingEdit` rows.

One card per file the reply's edits touch: its path, +/− counts, what became of it
(pending, applied, rejected, conflict, failed, undone) and the unified diff in hunks. A
pending card shows the change as it would apply to the file now (so its hunks are the ones
`accept(hunks=…)` numbers); an applied or undone one the change acdc wrote (the versions
before and after); a rejected one the change in the version the model read, in the lines
it had while pending. Every edit of the file that cannot apply is shown too, beside the
others, with why and where (`regions`: real line numbers), so the person sees the whole
reply before deciding; a run of them folds after the first two. A failure the model was
sent in the turn's automatic retry is folded apart, with what came of it. A protected file
(`chat.repo.protected`) says why it matters. A pending edit that no longer applies to the
file on disk is shown as the conflict it would become. Reads the database and the disk:
call it from a thread. Non-goals: deciding anything (`chat.repo.edits`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from django.template.loader import render_to_string

from chat.repo import edittools, git, indexing
from chat.repo.edits import applying, disk
from chat.repo.edits.versions import seen_texts
from chat.web.edits.commit_view import commit_frame
from chat.web.edits.regions import Region, placed, region_of
from chat.web.panels.fileupdates import badges_update
from contextcore.edits import diff_hunks
from contextcore.edits.diff import Hunk
from history import edits as rows_
from history.models import Message, PendingEdit, Session

Status = PendingEdit.Status
SHOWN_PROBLEMS = 2  # failed edits of one file shown open; the rest fold
# What a card says first, in this order of precedence when its rows differ.
_PRECEDENCE = ("pending", "conflict", "failed", "applied", "undone", "rejected", "retried")
_PROBLEMS = (Status.FAILED, Status.CONFLICT)
LABELS = MappingProxyType(
    {
        "pending": "Pending review",
        "applied": "Applied",
        "rejected": "Rejected",
        "conflict": "Conflict",
        "failed": "Failed",
        "undone": "Undone",
        "retried": "Sent back",
    }
)


@dataclass
class Problem:
    """One edit of the file that cannot apply, and where it meets the file."""

    row: PendingEdit
    region: Region

    @property
    def status(self) -> str:
        """A pending edit that no longer applies is shown as the conflict it would be."""
        return Status.CONFLICT if self.row.status == Status.PENDING else self.row.status

    @property
    def label(self) -> str:
        return LABELS[self.status]

    @property
    def reason(self) -> str:
        """The row's result without its "failed: path: " head (the label and card say it)."""
        return self.row.result.removeprefix(f"{self.status}: ").removeprefix(
            f"{git.shown(self.row.path)}: "
        )


@dataclass
class Card:
    path: str
    status: str
    rows: list[PendingEdit]
    hunks: list[Hunk] = field(default_factory=list)
    kind: str = ""  # "new file" | "deleted file" | ""
    problems: list[Problem] = field(default_factory=list)  # edits that cannot apply
    retried: list[PendingEdit] = field(default_factory=list)  # sent back to the model
    protected: str = ""  # why an edit of this file needs the person's own Accept
    already: bool = False  # pending, and the file already holds the change

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
        """Each decided row's result line once (rows applied as one set share theirs)."""
        shown = {id(problem.row) for problem in self.problems}
        decided = [
            row
            for row in self.rows
            if row.status not in (*_PROBLEMS, Status.RETRIED, Status.PENDING)
            and id(row) not in shown
        ]
        return list(dict.fromkeys(row.result for row in decided if row.result))

    @property
    def numbered(self) -> list[tuple[int, Hunk]]:
        return list(enumerate(self.hunks, 1))

    @property
    def shown_problems(self) -> list[Problem]:
        return self.problems[:SHOWN_PROBLEMS]

    @property
    def folded_problems(self) -> list[Problem]:
        return self.problems[SHOWN_PROBLEMS:]


def cards_for(message: Message, repo: indexing.Repository) -> list[Card]:
    """The message's cards, in the order its edits were proposed."""
    return _cards(message.edits.all(), message.session, repo)


def _cards(rows, session: Session, repo: indexing.Repository) -> list[Card]:
    groups: dict[str, list[PendingEdit]] = {}
    for row in rows.select_related("version_before", "version_after").order_by("id"):
        groups.setdefault(row.path, []).append(row)
    if not groups:
        return []
    return [_card(session, path, rows, repo) for path, rows in groups.items()]


def _card(session: Session, path: str, rows: list[PendingEdit], repo) -> Card:
    statuses = {row.status for row in rows}
    status = next(s for s in _PRECEDENCE if s in statuses)
    card = Card(path, status, rows)
    card.retried = [row for row in rows if row.status == Status.RETRIED]
    card.protected = next((row.protected for row in rows if row.protected), "")
    now = _now(repo, path)
    if status == Status.PENDING:
        _pending(card, session, repo, now)
    elif status in (Status.APPLIED, Status.UNDONE):
        done = [row for row in rows if row.status == status]
        before, after = done[0].version_before, done[-1].version_after
        _diff(card, before.content if before else None, after.content if after else None)
    elif status == Status.REJECTED:
        _rejected(card, session, repo, now)
    failing = [row for row in rows if row.status in _PROBLEMS]
    card.problems += [Problem(row, region_of(row, now, session, repo)) for row in failing]
    return card


def _now(repo, path: str) -> str | None:
    try:
        return disk.target(repo, path).text
    except disk.EditRefused:
        return None


def _pending(card: Card, session: Session, repo, now: str | None) -> None:
    waiting = [row for row in card.rows if row.status == Status.PENDING]
    results, changes = applying.preview_with_results(session, waiting, repo=repo)
    if changes:
        _, before, after = changes[0]
        _diff(card, before, after)
        return
    if results and all(result.ok for result in results):
        card.already = True  # the file holds the change: accepting it writes nothing
        return
    # It would not apply to the file as it is now: the conflict an Accept would record.
    card.status = Status.CONFLICT
    for row in waiting:
        row.result = f"conflict: {git.shown(card.path)} changed on disk since the model read it."
    card.problems = [Problem(row, region_of(row, now, session, repo)) for row in waiting]


def _diff(card: Card, before: str | None, after: str | None) -> None:
    card.hunks = diff_hunks(before, after)
    card.kind = "new file" if before is None else "deleted file" if after is None else ""


def _rejected(card: Card, session: Session, repo, now: str | None) -> None:
    """What was not made, where it was to be made: the change in the version the model
    read (else the file now), so the card keeps the lines and context it had while
    pending; the edits' own texts only where they place in neither."""
    rows = [row for row in card.rows if row.status == Status.REJECTED]
    ops = [rows_.op_of(row) for row in rows]
    if all(op.kind != "delete" for op in ops):
        seen = seen_texts(repo, ops, session).get(card.path)
        for base in dict.fromkeys(text for text in (seen, now) if text is not None):
            after = placed(ops, base)
            if after is not None and after != base:
                _diff(card, base, after)
                return
    for row in rows:
        _diff_proposed(card, row)


def _diff_proposed(card: Card, row: PendingEdit) -> None:
    """A rejected edit's own texts: what was not made."""
    if row.kind == PendingEdit.Kind.DELETE:
        card.kind = "deleted file"
        return
    old = row.old_text if row.kind == PendingEdit.Kind.REPLACE else None
    card.kind = "new file" if old is None and not row.overwrite else card.kind
    card.hunks += diff_hunks(old, row.new_text)


def edits_context(
    message: Message,
    repo: indexing.Repository,
    *,
    oob: bool = False,
    note: str = "",
    alert: bool = False,
) -> dict:
    cards = cards_for(message, repo)
    rows = [row for card in cards for row in card.rows]
    pending = [row for row in rows if row.status == Status.PENDING]
    return {
        "message_id": message.id,
        "section_id": f"edits-{message.id}",
        "cards": cards,
        "any_pending": bool(pending),
        "any_applied": any(row.status == Status.APPLIED for row in rows),
        "any_undone": any(row.status == Status.UNDONE for row in rows),
        "standing": sum(1 for row in rows if row.status in _PROBLEMS),
        "protected_paths": list(dict.fromkeys(row.path for row in pending if row.protected)),
        "oob": oob,
        "note": note,
        "alert": alert,
    }


def render_edits(
    message: Message,
    repo: indexing.Repository,
    *,
    oob: bool = False,
    note: str = "",
    alert: bool = False,
) -> str:
    """The reply's edits section (`edits-<message id>`); empty when edits are off. With
    no note of its own, it says why Auto-apply left edits for the person, if it did."""
    if not edittools.enabled():
        return ""
    if not note:
        note = applying.waiting_reason(message.session, message)
        alert = bool(note)
    context = edits_context(message, repo, oob=oob, note=note, alert=alert)
    return render_to_string("chat/_edits.html", context)


def latest_reply_frames(session_id: str, repo: indexing.Repository) -> list[str]:
    """The edits frame of the session's newest reply once its turn is over (the finished
    reply has an empty `edits-<id>` for it), and the git badges of the files its edits
    wrote (Auto-apply) with the commit form, which now has something to commit; none
    without edits."""
    message = (
        Message.objects.filter(session_id=session_id, role=Message.Role.ASSISTANT)
        .order_by("-seq")
        .first()
    )
    if message is None or not message.edits.exists():
        return []
    written = _written_badges(message.edits.all(), repo.root)
    frames = [render_edits(message, repo, oob=True), *written]
    if message.edits.filter(status=Status.APPLIED).exists():
        frames.append(commit_frame(message.session, repo))
    return frames


def turn_frames(turn_id: str, repo: indexing.Repository) -> list[str]:
    """The cards of a reply still streaming, and the git badges of the files written."""
    rows = PendingEdit.objects.filter(turn_id=turn_id, message=None)
    return [render_turn_edits(turn_id, repo, oob=True), *_written_badges(rows, repo.root)]


def _written_badges(rows, root: Path) -> list[str]:
    written = set(rows.filter(status=Status.APPLIED).values_list("path", flat=True))
    return [badges_message(written, root)] if written else []


def badges_message(paths: Iterable[str], root: Path) -> str:
    """A Files panel update with the git badges of `paths` ("" where git sees no change)
    in the repository at `root`: the watcher's events carry none."""
    now = git.status(root)
    return badges_update({path: now.get(path, "") for path in paths})


def render_turn_edits(turn_id: str, repo: indexing.Repository, *, oob: bool = False) -> str:
    """The edits a reply still streaming has proposed (`msg-<turn>-edits`), as read-only
    cards: they are accepted or rejected once the reply is stored and its cards drawn."""
    if not edittools.enabled():
        return ""
    rows = PendingEdit.objects.filter(turn_id=turn_id, message=None)
    first = rows.select_related("session").first()
    cards = _cards(rows, first.session, repo) if first is not None else []
    context = {"section_id": f"msg-{turn_id}-edits", "cards": cards, "live": True, "oob": oob}
    return render_to_string("chat/_edits.html", context)


def pending_frames(session_id: str, paths: list[str], repo: indexing.Repository) -> str:
    """The edits sections, drawn again, of the session's replies with edits pending on
    `paths` (files that changed on disk: a pending card may now be a conflict)."""
    if not edittools.enabled():
        return ""
    waiting = PendingEdit.objects.filter(
        session_id=session_id, status=Status.PENDING, path__in=paths
    ).exclude(message=None)
    ids = set(waiting.values_list("message_id", flat=True))
    replies = Message.objects.filter(pk__in=ids).select_related("session").order_by("seq")
    return "".join(render_edits(message, repo, oob=True) for message in replies)
