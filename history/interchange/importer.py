"""Import an AC-DC-style `history.jsonl` (seed 000's schema) into the session store.

Each line is one message. A line that cannot be stored, whatever is wrong with it, is
skipped and counted under its reason with its line number; every other line is stored.
Each line is checked before its batch goes to the database (`lines.read_lines`), and a
batch the database still refuses is stored again line by line, each in a savepoint.
Idempotent by message id: fixing the lines named and importing again adds just those.
`image_refs` are read from the `images/` folder beside the file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from django.db import DatabaseError, transaction
from django.db.models import Max

from history.images import DecodeGate, ImageRejected, image_store, message_attach_images
from history.interchange.lines import BadLine, ImportLine, read_lines
from history.models import Image, Message, Session

BATCH = 500
SHOWN_LINES = 5  # line numbers named per reason
Progress = Callable[[int, int], None]  # bytes read, total bytes


@dataclass
class ImportReport:
    imported: int = 0
    already_present: int = 0
    sessions_created: int = 0
    skipped: dict[str, list[int]] = field(default_factory=dict)  # reason -> line numbers
    missing_images: list[str] = field(default_factory=list)

    def skip(self, number: int, reason: str) -> None:
        self.skipped.setdefault(reason, []).append(number)

    @property
    def skipped_lines(self) -> list[int]:
        return sorted(n for numbers in self.skipped.values() for n in numbers)

    def summary(self) -> str:
        """One line of counts, then one indented line per reason a line was skipped."""
        text = (
            f"imported {self.imported:,} messages ({self.sessions_created:,} new "
            f"session{'' if self.sessions_created == 1 else 's'}); "
            f"{self.already_present:,} already present"
        )
        if self.missing_images:
            text += f"; {len(self.missing_images):,} images not found"
        if not self.skipped:
            return text
        count = len(self.skipped_lines)
        text += f"; skipped {_lines(count)} that could not be stored:"
        for reason, numbers in sorted(self.skipped.items(), key=lambda item: item[1][0]):
            shown = ", ".join(map(str, numbers[:SHOWN_LINES]))
            more = "" if len(numbers) <= SHOWN_LINES else ", …"
            noun = "line" if len(numbers) == 1 else "lines"
            text += f"\n  {len(numbers):,} {reason} ({noun} {shown}{more})"
        return text + "\n  fix them and import again: lines already stored are not added twice"


def _lines(count: int) -> str:
    return f"{count:,} line" if count == 1 else f"{count:,} lines"


@dataclass
class _Outcome:
    """What storing one batch did, added to the report only once its transaction commits."""

    imported: int = 0
    already_present: int = 0
    sessions_created: int = 0
    missing_images: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Images:
    """The images folder beside the file, and the process's decode gate they pass."""

    folder: Path
    decodes: DecodeGate

    def store(self, name: str) -> Image:
        file = self.folder / Path(name).name  # a bare file name: never leave the folder
        return image_store(file.read_bytes(), decodes=self.decodes)


def import_history(
    path: Path, *, repository: str, decodes: DecodeGate, progress: Progress | None = None
):
    """Store the sessions of AC-DC's `history.jsonl` at `path`; its images (in `images/`
    beside it) are decoded under the process's `decodes` gate."""
    report = ImportReport()
    images_from = _Images(path.parent / "images", decodes)
    batch: list[ImportLine] = []
    for line in _read_lines(path, report, progress):
        batch.append(line)
        if len(batch) >= BATCH:
            _import_batch(batch, repository, images_from, report)
            batch = []
    if batch:
        _import_batch(batch, repository, images_from, report)
    return report


def _read_lines(
    path: Path, report: ImportReport, progress: Progress | None
) -> Iterator[ImportLine]:
    total = path.stat().st_size
    with path.open("rb") as handle:
        for number, done, line in read_lines(handle):
            if progress and number % 1000 == 0:
                progress(done, total)
            if isinstance(line, BadLine):
                report.skip(number, str(line))
            else:
                yield line
    if progress:
        progress(total, total)


def _import_batch(
    batch: list[ImportLine], repository: str, images_from: _Images, report: ImportReport
):
    """The batch in one transaction; if the database refuses it, line by line."""
    try:
        with transaction.atomic():
            outcome = _store(batch, repository, images_from)
    except _REFUSALS:
        outcome = _store_one_by_one(batch, repository, images_from, report)
    report.imported += outcome.imported
    report.already_present += outcome.already_present
    report.sessions_created += outcome.sessions_created
    report.missing_images += outcome.missing_images


_REFUSALS = (DatabaseError, ValueError, OverflowError)


def _store_one_by_one(batch, repository: str, images_from: _Images, report: ImportReport):
    """Each line in a savepoint of one transaction, so a line the database refuses costs
    only that line; it is counted once the transaction has committed."""
    refused: list[tuple[int, str]] = []
    outcome = _Outcome()
    with transaction.atomic():
        for line in batch:
            try:
                with transaction.atomic():
                    _add(outcome, _store([line], repository, images_from))
            except _REFUSALS as exc:
                refused.append((line.number, _refusal(exc)))
    for number, reason in refused:
        report.skip(number, reason)
    return outcome


def _add(total: _Outcome, one: _Outcome) -> None:
    total.imported += one.imported
    total.already_present += one.already_present
    total.sessions_created += one.sessions_created
    total.missing_images += one.missing_images


def _refusal(exc: Exception) -> str:
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return f"refused by the database ({first[:120]})"


def _store(batch: list[ImportLine], repository: str, images_from: _Images) -> _Outcome:
    outcome = _Outcome()
    lines = {line.id: line for line in batch}
    present = set(Message.objects.filter(pk__in=list(lines)).values_list("pk", flat=True))
    outcome.already_present = len(present)
    fresh = [line for mid, line in lines.items() if mid not in present]
    sessions, new_ids = _ensure_sessions(repository, fresh, outcome)
    next_seq = _next_seqs(sessions)
    rows = []
    for line in fresh:
        rows.append(_message(line, sessions[line.session_id], next_seq[line.session_id]))
        next_seq[line.session_id] += 1
    created = Message.objects.bulk_create(rows)
    for row, line in zip(created, fresh, strict=True):
        row.timestamp = line.timestamp or datetime(1970, 1, 1, tzinfo=UTC)
    Message.objects.bulk_update(created, ["timestamp"])
    _keep_message_times(sessions, fresh, new_ids)
    _attach_images(created, fresh, images_from, outcome)
    outcome.imported = len(created)
    return outcome


def _ensure_sessions(repository, fresh, outcome) -> tuple[dict[str, Session], set[str]]:
    ids = {line.session_id for line in fresh}
    existing = {s.pk: s for s in Session.objects.filter(pk__in=ids)}
    new_ids = ids - existing.keys()
    for sid in new_ids:
        first_user = next(
            (x.content for x in fresh if x.session_id == sid and x.role == "user"), ""
        )
        title = " ".join(first_user.split())[:80]
        existing[sid] = Session.objects.create(id=sid, repository=repository, title=title)
        outcome.sessions_created += 1
    return existing, new_ids


def _keep_message_times(
    sessions: dict[str, Session], lines: list[ImportLine], new_ids: set[str]
) -> None:
    """A new session spans its messages' times (created at the first, updated at the last);
    one that already existed only widens its span. A queryset update, since `updated_at` is
    auto_now and a save would stamp the import time on it again. Lines without a readable
    timestamp leave the times alone rather than date a session 1970."""
    spans: dict[str, tuple[datetime, datetime]] = {}
    for line in lines:
        if line.timestamp is None:
            continue
        first, last = spans.get(line.session_id, (line.timestamp, line.timestamp))
        spans[line.session_id] = (min(first, line.timestamp), max(last, line.timestamp))
    for sid, (first, last) in spans.items():
        session = sessions[sid]
        if sid not in new_ids:
            first, last = min(first, session.created_at), max(last, session.updated_at)
        Session.objects.filter(pk=sid).update(created_at=first, updated_at=last)
        session.created_at, session.updated_at = first, last


def _next_seqs(sessions: dict[str, Session]) -> dict[str, int]:
    last = dict(
        Message.objects.filter(session_id__in=list(sessions))
        .values_list("session_id")
        .annotate(n=Max("seq"))
        .values_list("session_id", "n")
    )
    return {sid: (last[sid] + 1 if last.get(sid) is not None else 0) for sid in sessions}


def _message(line: ImportLine, session: Session, seq: int) -> Message:
    return Message(
        id=line.id,
        session=session,
        seq=seq,
        role=line.role,
        content=line.content,
        files=line.files,
        files_modified=line.files_modified,
        edit_results=line.edit_results,
        mentions=line.mentions,
    )


def _attach_images(
    messages, lines: list[ImportLine], images_from: _Images, outcome: _Outcome
) -> None:
    for message, line in zip(messages, lines, strict=True):
        images = []
        for name in line.image_refs[:5]:
            try:
                images.append(images_from.store(name))
            except (OSError, ImageRejected):
                outcome.missing_images.append(name)
        if images:
            message_attach_images(message, images)
