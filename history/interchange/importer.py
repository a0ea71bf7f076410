"""Import an AC-DC-style `history.jsonl` (seed 000's schema) into the session store.

Each line is one message. A line that cannot be stored, whatever is wrong with it, is
skipped and counted under its reason with its line number; every other line is stored.
Each line is checked before its batch goes to the database (`_checked`), and a batch the
database still refuses is stored again line by line, each in a savepoint. An unreadable
timestamp leaves a line undated, not skipped. Idempotent by message id (a line without
one gets an id derived from its content): fixing the lines named and importing again
adds just those. `image_refs` are read from the `images/` folder beside the file.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from django.db import DatabaseError, transaction
from django.db.models import Max

from history.images import ImageRejected, image_store, message_attach_images
from history.models import Message, Session

BATCH = 500
MAX_LINE_BYTES = 32 * 1024 * 1024
MAX_DEPTH = 64  # of a stored JSON field; SQLite's and PostgreSQL's JSON have limits too
ROLES = {"user", "assistant"}
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


def import_history(path: Path, *, repository: str, progress: Progress | None = None):
    report = ImportReport()
    images_dir = path.parent / "images"
    batch: list[ImportLine] = []
    for line in _read_lines(path, report, progress):
        batch.append(line)
        if len(batch) >= BATCH:
            _import_batch(batch, repository, images_dir, report)
            batch = []
    if batch:
        _import_batch(batch, repository, images_dir, report)
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


def _import_batch(batch: list[ImportLine], repository: str, images_dir: Path, report: ImportReport):
    """The batch in one transaction; if the database refuses it, line by line."""
    try:
        with transaction.atomic():
            outcome = _store(batch, repository, images_dir)
    except _REFUSALS:
        outcome = _store_one_by_one(batch, repository, images_dir, report)
    report.imported += outcome.imported
    report.already_present += outcome.already_present
    report.sessions_created += outcome.sessions_created
    report.missing_images += outcome.missing_images


_REFUSALS = (DatabaseError, ValueError, OverflowError)


def _store_one_by_one(batch, repository: str, images_dir: Path, report: ImportReport):
    """Each line in a savepoint of one transaction, so a line the database refuses costs
    only that line; it is counted once the transaction has committed."""
    refused: list[tuple[int, str]] = []
    outcome = _Outcome()
    with transaction.atomic():
        for line in batch:
            try:
                with transaction.atomic():
                    _add(outcome, _store([line], repository, images_dir))
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


def _store(batch: list[ImportLine], repository: str, images_dir: Path) -> _Outcome:
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
    _attach_images(created, fresh, images_dir, outcome)
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


def _attach_images(messages, lines: list[ImportLine], images_dir: Path, outcome: _Outcome) -> None:
    for message, line in zip(messages, lines, strict=True):
        images = []
        for name in line.image_refs[:5]:
            file = images_dir / Path(name).name  # a bare file name: never leave the folder
            try:
                images.append(image_store(file.read_bytes()))
            except (OSError, ImageRejected):
                outcome.missing_images.append(name)
        if images:
            message_attach_images(message, images)


class BadLine(ValueError):
    """Why a line cannot be stored; `str(exc)` is the reason the report groups by."""


@dataclass(frozen=True)
class ImportLine:
    """One line, checked: every value is one both databases store."""

    number: int
    id: str
    session_id: str
    role: str
    content: str
    timestamp: datetime | None
    files: list[str]
    files_modified: list[str]
    edit_results: list[Any]
    image_refs: list[str]
    mentions: list[dict[str, Any]] = field(default_factory=list)  # acdc's own key


def read_lines(handle: BinaryIO) -> Iterator[tuple[int, int, ImportLine | BadLine]]:
    """(line number, bytes read so far, the line or why it is bad), blank lines left out."""
    done = 0
    for number, (raw, size) in enumerate(_raw_lines(handle), start=1):
        done += size
        if raw is not None and not raw.strip():
            continue
        try:
            line: ImportLine | BadLine = _checked(number, raw)
        except BadLine as exc:
            line = exc
        yield number, done, line


def _raw_lines(handle: BinaryIO) -> Iterator[tuple[bytes | None, int]]:
    """Each line and its size; None for one over MAX_LINE_BYTES, which is read past in
    pieces rather than held whole."""
    while raw := handle.readline(MAX_LINE_BYTES + 1):
        if len(raw) <= MAX_LINE_BYTES or raw.endswith(b"\n"):
            yield raw, len(raw)
            continue
        size = len(raw)
        while raw and not raw.endswith(b"\n"):
            raw = handle.readline(1024 * 1024)
            size += len(raw)
        yield None, size


def _checked(number: int, raw: bytes | None) -> ImportLine:
    record = _parsed(raw)
    content, role = record.get("content"), record.get("role")
    if role not in ROLES:
        raise BadLine('with a role other than "user" or "assistant"')
    if not isinstance(content, str):
        raise BadLine("whose content is not text")
    session_id = _short_text(record.get("session_id"), "session_id", required=True)
    stamp = _parsed_timestamp(record.get("timestamp"))
    line = ImportLine(
        number=number,
        id=_short_text(record.get("id"), "id", required=False) or _derived_id(record, stamp),
        session_id=session_id,
        role=role,
        content=content,
        timestamp=stamp,
        files=_string_list(record.get("files")),
        files_modified=_string_list(record.get("files_modified")),
        edit_results=_list(record.get("edit_results")),
        image_refs=_string_list(record.get("image_refs")),
        mentions=_mentions(record.get("mentions")),
    )
    _check_storable(line)
    return line


def _parsed(raw: bytes | None) -> dict[str, Any]:
    if raw is None:
        raise BadLine(f"longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadLine("not valid UTF-8") from None
    try:
        record = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite)
    except RecursionError:
        raise BadLine("nested too deeply") from None
    except BadLine:
        raise
    except ValueError:  # JSONDecodeError, and integers of over 4,300 digits
        raise BadLine("not JSON") from None
    if not isinstance(record, dict):
        raise BadLine("not a JSON object")
    return record


def _refuse_constant(name: str) -> float:
    raise BadLine("with NaN or Infinity, which JSON does not allow")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BadLine("with a number too large to store")
    return value


def _short_text(value: Any, name: str, *, required: bool) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not 0 < len(value) <= 40:
        raise BadLine(f"whose {name} is not text of 1 to 40 characters")
    return value


def _check_storable(line: ImportLine) -> None:
    """Text both databases take: no lone surrogate (not encodable as UTF-8), no NUL
    (PostgreSQL refuses it in text and JSON), JSON fields nested at most MAX_DEPTH."""
    stored = (line.id, line.session_id, line.content, line.files, line.files_modified)
    extra = (line.edit_results, line.image_refs, line.mentions)
    stack: list[tuple[Any, int]] = [(v, 0) for v in (*stored, *extra)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise BadLine("nested too deeply")
        if isinstance(value, dict):
            stack += [(key, depth + 1) for key in value]
            stack += [(item, depth + 1) for item in value.values()]
        elif isinstance(value, list):
            stack += [(item, depth + 1) for item in value]
        elif isinstance(value, str):
            _check_text(value)


def _check_text(value: str) -> None:
    if "\0" in value:
        raise BadLine("with a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise BadLine("with text that is not valid Unicode (a lone surrogate)") from None


def _derived_id(record: dict[str, Any], stamp: datetime | None) -> str:
    stamp = stamp or datetime(1970, 1, 1, tzinfo=UTC)
    fields = [record.get(k) for k in ("session_id", "timestamp", "role", "content")]
    digest = hashlib.sha256(json.dumps(fields).encode()).hexdigest()
    return f"{int(stamp.timestamp() * 1000)}-{digest[:8]}"


def _parsed_timestamp(value: Any) -> datetime | None:
    """An aware time in UTC, or None when there is none or it cannot be read (or held in
    UTC: year 1 with a positive offset falls before the first representable instant)."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def _string_list(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _mentions(value: Any) -> list[dict[str, Any]]:
    """acdc's exported @-mentions, each as the chat stores one; anything else is left out."""
    kept = []
    for entry in _list(value):
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            continue
        symbol, line = entry.get("symbol", ""), entry.get("line", 0)
        if isinstance(symbol, str) and type(line) is int and line >= 0:
            kept.append(
                {
                    "kind": ("body" if entry.get("kind") == "body" else "symbol")
                    if symbol
                    else "file",
                    "path": entry["path"],
                    "symbol": symbol,
                    "line": line,
                }
            )
    return kept
