"""Content-object identity and hashing per seed 001 §2.4–2.6, §5.3 and §5.4: pure functions.

Every hash is lowercase hex SHA-256. Structured inputs are serialized by `stable_stringify`
(sorted keys, no whitespace, UTF-8, non-ASCII kept as is, no NaN) so the same fields always
give the same digest on any machine. Keys whose value is None are kept as JSON null; callers
building type-specific fields leave optional fields out instead (as JSON.stringify drops
`undefined`). No Django imports: the engine and the tests use this without a database.
Non-goals: storage (history.models) and the indexing protocol (chat.repo.indexing).
"""

from __future__ import annotations

import hashlib
import json
import socket
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

FILE = "file"
TOOLCALL = "toolcall"
FILESYSTEM = "filesystem"
MACHINE_ID_PATHS = ("/etc/machine-id", "/var/lib/dbus/machine-id")


def stable_stringify(value: Any) -> str:
    """Canonical JSON text: sorted keys, `,` and `:` separators, raw UTF-8, NaN refused."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def sha256_hex(data: bytes | str) -> str:
    """SHA-256 of bytes, or of a string's UTF-8 encoding."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()


def identity_hash(object_type: str, *, source: dict | None = None, object_id: str = "") -> str:
    """§2.5: sourced `SHA-256({type, source})`; unsourced `SHA-256({type, 'xt/id': id})`."""
    if source is not None:
        return sha256_hex(stable_stringify({"type": object_type, "source": source}))
    if not object_id:
        raise ValueError("an unsourced object needs its assigned id")
    return sha256_hex(stable_stringify({"type": object_type, "xt/id": object_id}))


def file_hash(raw: bytes | None) -> str | None:
    """§2.4: SHA-256 of the raw file bytes; None when the file was never read or is gone."""
    return None if raw is None else sha256_hex(raw)


def content_hash(content: str | None) -> str | None:
    return None if content is None else sha256_hex(content)


def metadata_hash(fields: dict[str, Any]) -> str:
    """SHA-256 of the type-specific fields only (never content, envelope or hash fields)."""
    return sha256_hex(stable_stringify(fields))


def object_hash(file_h: str | None, content_h: str | None, metadata_h: str) -> str:
    return sha256_hex(
        stable_stringify(
            {"file_hash": file_h, "content_hash": content_h, "metadata_hash": metadata_h}
        )
    )


@dataclass(frozen=True)
class VersionHashes:
    file_hash: str | None
    content_hash: str | None
    metadata_hash: str
    object_hash: str


def version_hashes(raw: bytes | None, content: str | None, fields: dict) -> VersionHashes:
    """The four per-version hashes of §2.4 for one payload."""
    f, c, m = file_hash(raw), content_hash(content), metadata_hash(fields)
    return VersionHashes(f, c, m, object_hash(f, c, m))


def file_fields(canonical_path: str, content: str | None) -> dict[str, Any]:
    """§2.6 `file` fields. char_count counts code points (JS would count UTF-16 units)."""
    suffix = PurePosixPath(canonical_path).suffix
    return {"file_type": suffix[1:], "char_count": 0 if content is None else len(content)}


def toolcall_fields(
    *,
    tool: str,
    args: dict,
    status: str,
    chat_ref: str,
    args_display: str | None = None,
    file_refs: Sequence[str] | None = None,
) -> dict[str, Any]:
    """§2.6 `toolcall` fields; the two optional ones are left out when not given."""
    if status not in ("ok", "fail"):
        raise ValueError(f"toolcall status must be ok or fail, not {status!r}")
    fields: dict[str, Any] = {"tool": tool, "args": args, "status": status, "chat_ref": chat_ref}
    if args_display is not None:
        fields["args_display"] = args_display
    if file_refs is not None:
        fields["file_refs"] = list(file_refs)
    return fields


def chat_ref(session_id: str) -> str:
    """The id of a session's chat object, in §2.2's `chat:{sessionId}` form."""
    return f"chat:{session_id}"


def toolcall_object_id(session_id: str, call_id: str) -> str:
    """Assigned id of a toolcall: provider call ids repeat across sessions, so scope them."""
    return f"toolcall:{session_id}:{call_id}"


def filesystem_source(filesystem_id: str, canonical_path: str) -> dict[str, str]:
    """§2.3 filesystem source binding (camelCase key as in the seed: it is hashed)."""
    return {"type": FILESYSTEM, "filesystemId": filesystem_id, "path": canonical_path}


@dataclass(frozen=True)
class MountMapping:
    """§5.3: one agent-visible prefix and the canonical (host) prefix it stands for."""

    agent_prefix: str
    canonical_prefix: str
    filesystem_id: str


def _under(path: str, prefix: str) -> bool:
    # Whole path components only: /workspace must not capture /workspace2.
    prefix = prefix.rstrip("/") or "/"
    return path == prefix or path.startswith(prefix if prefix == "/" else prefix + "/")


def _swap(path: str, old: str, new: str) -> str:
    rest = path[len(old.rstrip("/")) :].lstrip("/")
    base = new.rstrip("/") or "/"
    return base if not rest else f"{base.rstrip('/')}/{rest}"


def to_canonical(
    agent_path: str, mappings: Iterable[MountMapping], default_filesystem_id: str
) -> tuple[str, str]:
    """Forward: longest agent-prefix match wins; no match keeps the path and default FS id."""
    matches = [m for m in mappings if _under(agent_path, m.agent_prefix)]
    if not matches:
        return agent_path, default_filesystem_id
    best = max(matches, key=lambda m: len(m.agent_prefix.rstrip("/")))
    return _swap(agent_path, best.agent_prefix, best.canonical_prefix), best.filesystem_id


def to_display(source: dict, mappings: Iterable[MountMapping]) -> str:
    """Reverse: canonical → agent-visible path; the canonical path when nothing maps it."""
    path = source["path"]
    matches = [
        m
        for m in mappings
        if m.filesystem_id == source.get("filesystemId") and _under(path, m.canonical_prefix)
    ]
    if not matches:
        return path
    best = max(matches, key=lambda m: len(m.canonical_prefix.rstrip("/")))
    return _swap(path, best.canonical_prefix, best.agent_prefix)


def filesystem_id_from_machine_id(machine_id: str) -> str:
    """§5.4: SHA-256 of the machine id (surrounding whitespace, e.g. its newline, dropped)."""
    return sha256_hex(machine_id.strip())


def host_filesystem_id(paths: Sequence[str] = MACHINE_ID_PATHS) -> str:
    """The host's filesystem id; the hostname stands in where no machine-id file exists."""
    for candidate in paths:
        try:
            with open(candidate, encoding="utf-8") as handle:
                text = handle.read().strip()
        except OSError:
            continue
        if text:
            return filesystem_id_from_machine_id(text)
    return filesystem_id_from_machine_id(f"hostname:{socket.gethostname()}")
