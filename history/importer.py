"""Import an AC-DC-style `history.jsonl` (seed 000's schema) into the session store.

Each line is one message. Corrupt lines (not JSON, not an object, missing role/content/
session) are skipped and counted with their line numbers. The import is idempotent by
message id: running it twice adds nothing the second time (a line without an id gets one
derived from its content, so it is idempotent too). Images named in `image_refs` are read
from the `images/` folder beside the file. Progress is reported through a callback.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.db import transaction
from django.db.models import Max

from history.images import ImageRejected, image_store, message_attach_images
from history.models import Message, Session

BATCH = 500
ROLES = {"user", "assistant"}
Progress = Callable[[int, int], None]  # bytes read, total bytes


@dataclass
class ImportReport:
    imported: int = 0
    already_present: int = 0
    sessions_created: int = 0
    corrupt_lines: list[int] = field(default_factory=list)
    missing_images: list[str] = field(default_factory=list)

    def summary(self) -> str:
        text = (
            f"imported {self.imported:,} messages ({self.sessions_created:,} new sessions); "
            f"{self.already_present:,} already present"
        )
        if self.corrupt_lines:
            shown = ", ".join(map(str, self.corrupt_lines[:10]))
            more = "" if len(self.corrupt_lines) <= 10 else ", ..."
            text += f"; skipped {len(self.corrupt_lines):,} corrupt lines ({shown}{more})"
        if self.missing_images:
            text += f"; {len(self.missing_images):,} images not found"
        return text


@dataclass(frozen=True)
class _Line:
    number: int
    record: dict[str, Any]


def import_history(path: Path, *, repository: str, progress: Progress | None = None):
    report = ImportReport()
    images_dir = path.parent / "images"
    batch: list[_Line] = []
    for line in _read_lines(path, report, progress):
        batch.append(line)
        if len(batch) >= BATCH:
            _import_batch(batch, repository, images_dir, report)
            batch = []
    if batch:
        _import_batch(batch, repository, images_dir, report)
    return report


def _read_lines(path: Path, report: ImportReport, progress: Progress | None) -> Iterator[_Line]:
    total = path.stat().st_size
    done = 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            done += len(raw)
            if progress and number % 1000 == 0:
                progress(done, total)
            record = _parse(raw)
            if record is None:
                if raw.strip():
                    report.corrupt_lines.append(number)
                continue
            yield _Line(number, record)
    if progress:
        progress(total, total)


def _parse(raw: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(record, dict):
        return None
    message_id = record.get("id")
    ok = (
        (message_id is None or (isinstance(message_id, str) and 0 < len(message_id) <= 40))
        and record.get("role") in ROLES
        and isinstance(record.get("content"), str)
        and isinstance(record.get("session_id"), str)
        and 0 < len(record["session_id"]) <= 40
    )
    return record if ok else None


@transaction.atomic
def _import_batch(batch: list[_Line], repository: str, images_dir: Path, report: ImportReport):
    ids = {line.record.get("id") or _derived_id(line.record): line for line in batch}
    present = set(Message.objects.filter(pk__in=list(ids)).values_list("pk", flat=True))
    report.already_present += len(present)
    fresh = [(mid, line.record) for mid, line in ids.items() if mid not in present]
    sessions, new_ids = _ensure_sessions(
        {r["session_id"] for _, r in fresh}, repository, fresh, report
    )
    next_seq = _next_seqs(sessions)
    rows = []
    for mid, record in fresh:
        sid = record["session_id"]
        rows.append(_message(mid, record, sessions[sid], next_seq[sid]))
        next_seq[sid] += 1
    created = Message.objects.bulk_create(rows)
    for row, (_, record) in zip(created, fresh, strict=True):
        row.timestamp = _timestamp(record.get("timestamp"))
    Message.objects.bulk_update(created, ["timestamp"])
    _keep_message_times(sessions, [r for _, r in fresh], new_ids)
    _attach_images(created, [r for _, r in fresh], images_dir, report)
    report.imported += len(created)


def _ensure_sessions(ids, repository, fresh, report) -> tuple[dict[str, Session], set[str]]:
    existing = {s.pk: s for s in Session.objects.filter(pk__in=ids)}
    new_ids = ids - existing.keys()
    for sid in new_ids:
        first_user = next(
            (r["content"] for _, r in fresh if r["session_id"] == sid and r["role"] == "user"), ""
        )
        title = " ".join(first_user.split())[:80]
        existing[sid] = Session.objects.create(id=sid, repository=repository, title=title)
        report.sessions_created += 1
    return existing, new_ids


def _keep_message_times(
    sessions: dict[str, Session], records: list[dict[str, Any]], new_ids: set[str]
) -> None:
    """A new session spans its messages' times (created at the first, updated at the last);
    one that already existed only widens its span. A queryset update, since `updated_at` is
    auto_now and a save would stamp the import time on it again. Lines without a readable
    timestamp leave the times alone rather than date a session 1970."""
    spans: dict[str, tuple[datetime, datetime]] = {}
    for record in records:
        stamp = _parsed_timestamp(record.get("timestamp"))
        if stamp is None:
            continue
        first, last = spans.get(record["session_id"], (stamp, stamp))
        spans[record["session_id"]] = (min(first, stamp), max(last, stamp))
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


def _message(mid: str, record: dict[str, Any], session: Session, seq: int) -> Message:
    return Message(
        id=mid,
        session=session,
        seq=seq,
        role=record["role"],
        content=record["content"],
        files=_string_list(record.get("files")),
        files_modified=_string_list(record.get("files_modified")),
        edit_results=record.get("edit_results")
        if isinstance(record.get("edit_results"), list)
        else [],
    )


def _attach_images(messages, records, images_dir: Path, report: ImportReport) -> None:
    for message, record in zip(messages, records, strict=True):
        images = []
        for name in _string_list(record.get("image_refs"))[:5]:
            file = images_dir / Path(name).name  # a bare file name: never leave the folder
            try:
                images.append(image_store(file.read_bytes()))
            except (OSError, ImageRejected):
                report.missing_images.append(name)
        if images:
            message_attach_images(message, images)


def _derived_id(record: dict[str, Any]) -> str:
    stamp = _timestamp(record.get("timestamp"))
    digest = hashlib.sha256(
        json.dumps(
            [
                record.get("session_id"),
                record.get("timestamp"),
                record.get("role"),
                record.get("content"),
            ]
        ).encode()
    ).hexdigest()
    return f"{int(stamp.timestamp() * 1000)}-{digest[:8]}"


def _timestamp(value: Any) -> datetime:
    return _parsed_timestamp(value) or datetime(1970, 1, 1, tzinfo=UTC)


def _parsed_timestamp(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _string_list(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
