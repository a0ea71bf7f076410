"""How file contents are written into a prompt, and read back out of one.

Owns the text shapes: a file block (label line, then the content in a fence longer than any
backtick run inside it, so content can never close it), a unified diff between two versions,
and the "Current context" manifest that names the current version of every selected file.
Its inverse, reading what a request says is current, lives with the tests that use it
(`tests/current_files.py`).
Invariant: formatting is pure; the same inputs give the same bytes.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence

from contextcore.objectview import ACTIVE_PREFIX
from contextcore.paths import shown

MANIFEST_HEADER = "# Current context"
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def fence_for(text: str) -> str:
    if "```" not in text:  # the common case, found by a fast substring search
        return "```"
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _label(name: str) -> str:
    """A file's path as one line (`contextcore.paths.shown`); an active object's label
    (`ACTIVE_CONTENT id=…`) is acdc's own text and stays as it is."""
    return name if name.startswith(ACTIVE_PREFIX) else shown(name)


def format_file_block(path: str, content: str, version: int | None = None) -> str:
    label = _label(path) if version is None else f"{_label(path)} (version {version})"
    fence = fence_for(content)
    return f"{label}\n{fence}\n{content}\n{fence}"


def format_diff_block(path: str, diff: str, version: int, base: int) -> str:
    fence = fence_for(diff)
    label = f"{_label(path)} (version {version}, diff against version {base})"
    return f"{label}\n{fence}diff\n{diff}\n{fence}"


def make_diff(old: str, new: str) -> str | None:
    """Unified diff (hunks only) turning `old` into `new`, or None when a diff could not be
    applied exactly (text not ending in a newline). Lines are split at "\n" only, so a CRLF
    file's lines keep their "\r" and its diff applies back byte for byte (checked)."""
    if not (old.endswith("\n") and new.endswith("\n")):
        return None
    lines = difflib.unified_diff(old.split("\n")[:-1], new.split("\n")[:-1], lineterm="", n=3)
    diff = "\n".join(list(lines)[2:])
    return diff if apply_diff(old, diff) == new else None


def apply_diff(old: str, diff: str) -> str:
    """Inverse of `make_diff`. Raises ValueError when the diff does not fit `old`."""
    source = old.split("\n")[:-1]
    out: list[str] = []
    pos = 0
    for line in diff.split("\n") if diff else []:
        hunk = _HUNK.match(line)
        if hunk:
            start = int(hunk.group(1)) - (0 if hunk.group(2) == "0" else 1)
            out.extend(source[pos:start])
            pos = start
        elif line.startswith(" "):
            if pos >= len(source) or source[pos] != line[1:]:
                raise ValueError("diff context does not match")
            out.append(line[1:])
            pos += 1
        elif line.startswith("-"):
            pos += 1
        elif line.startswith("+"):
            out.append(line[1:])
    out.extend(source[pos:])
    return "\n".join(out) + "\n"


def format_manifest(current: Mapping[str, int], metadata: Sequence[str] = ()) -> str:
    lines = [
        MANIFEST_HEADER,
        "The current version of every file in context is listed here; "
        "a file or version not listed is not current.",
    ]
    lines += [f"- {_label(path)}: version {version}" for path, version in current.items()]
    if metadata:
        lines += ["", "Other objects available (not shown in full):", *metadata]
    return "\n".join(lines)
