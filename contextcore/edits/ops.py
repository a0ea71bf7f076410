"""One edit: an operation on one path against the version the model saw, and its result.

An `EditOp` replaces old text with new text (once, or everywhere with `replace_all`),
creates a file (or, from `write_file`, replaces its whole content) or deletes one. It comes
from `edit_file` / `write_file` tool arguments (`op_from_tool`) or from a SEARCH/REPLACE
block (`contextcore.edits.blocks`); all three reach the same matcher. An `EditResult` says
what became of one op. Non-goals: paths are not checked here (the repository boundary in
`chat/repo` judges them), nothing touches the disk.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from contextcore.paths import shown

Kind = Literal["replace", "create", "delete"]
EDIT_TOOLS = ("edit_file", "write_file")


class EditArgsError(ValueError):
    """Tool arguments that make no edit; the message is for the model."""


def text_sha256(text: str) -> str:
    """SHA-256 of a text's UTF-8 bytes: the raw file hash for any UTF-8 file."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class EditOp:
    path: str
    kind: Kind
    old_text: str = ""
    new_text: str = ""  # the whole content for "create"
    replace_all: bool = False
    overwrite: bool = False  # "create" may replace an existing file (write_file)
    base_sha256: str | None = None  # the version the model saw, when known
    source: str = "edit_file"  # edit_file | write_file | block | delete
    origin_line: int = 0  # for a block: its SEARCH line in the reply (1-based)

    @classmethod
    def delete(cls, path: str, base_sha256: str | None = None) -> EditOp:
        return cls(path=path, kind="delete", base_sha256=base_sha256, source="delete")

    def describe(self) -> str:
        """How the op is named to the model: its path and where it came from."""
        where = f"block at line {self.origin_line}" if self.source == "block" else self.source
        return f"{shown(self.path)} ({where})"


def op_from_tool(name: str, args: Mapping[str, Any], base_sha256: str | None = None) -> EditOp:
    """The op an `edit_file` or `write_file` call asks for; `EditArgsError` says what is wrong."""
    if name not in EDIT_TOOLS:
        raise EditArgsError(f"{name!r} is not an edit tool")
    if not isinstance(args, Mapping):
        raise EditArgsError(f"{name}: the arguments must be an object")
    path = _string(args, "path", name)
    if not path.strip():
        raise EditArgsError(f"{name}: 'path' is empty")
    if name == "write_file":
        content = _string(args, "content", name)
        return EditOp(
            path, "create", new_text=content, overwrite=True, source=name, base_sha256=base_sha256
        )
    old, new = _string(args, "old_text", name), _string(args, "new_text", name)
    replace_all = args.get("replace_all", False)
    if not isinstance(replace_all, bool):
        raise EditArgsError(f"{name}: 'replace_all' must be true or false")
    if old == new:
        raise EditArgsError(f"{name}: old_text and new_text are the same; nothing to change")
    if not old.strip():
        # Empty old text names no place in a file: it can only create one.
        return EditOp(path, "create", new_text=new, source=name, base_sha256=base_sha256)
    return EditOp(path, "replace", old, new, replace_all, source=name, base_sha256=base_sha256)


def _string(args: Mapping[str, Any], key: str, tool: str) -> str:
    value = args.get(key)
    if not isinstance(value, str):
        raise EditArgsError(f"{tool}: '{key}' is required and must be a string")
    return value


class Outcome(StrEnum):
    APPLIED = "applied"
    ALREADY_APPLIED = "already applied"
    FAILED = "failed"
    CONFLICT = "conflict"  # valid against the version the model saw, not against the disk


@dataclass(frozen=True)
class EditResult:
    index: int  # the op's place in its batch (0-based)
    op: EditOp
    outcome: Outcome
    pass_name: str = ""  # the matcher pass that placed it (exact, indentation, ...)
    added: int = 0
    removed: int = 0
    line: int = 0  # first changed line (1-based), 0 when none
    reason: str = ""  # why it failed or conflicts, for the model and the person
    closest: str = ""  # the file's closest lines, numbered (reported, never applied)
    matches: tuple[int, ...] = field(default=())  # line numbers of every match when ambiguous
    reanchored: bool = False  # the file changed since the model read it; matched anyway

    @property
    def ok(self) -> bool:
        return self.outcome in (Outcome.APPLIED, Outcome.ALREADY_APPLIED)
