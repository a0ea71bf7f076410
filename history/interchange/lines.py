"""The lines of an AC-DC-style `history.jsonl` (seed 000's schema), read and checked.

`read_lines` yields every non-blank line as an `ImportLine` whose values both databases
store, or as the `BadLine` saying why it cannot be stored; it never stops at a bad line.
A line over MAX_LINE_BYTES is read past in pieces, never held whole. An unreadable
timestamp leaves a line undated, not bad; a line without an id gets one derived from its
content, so importing the same file twice adds nothing. Plain Python: no database here.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, BinaryIO

MAX_LINE_BYTES = 32 * 1024 * 1024
MAX_DEPTH = 64  # of a stored JSON field; SQLite's and PostgreSQL's JSON have limits too
ROLES = frozenset({"user", "assistant"})


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
