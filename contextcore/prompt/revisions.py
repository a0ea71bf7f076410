"""How file contents are written into a prompt, and read back out of one.

Owns the text shapes: a file block (label line, then the content in a fence longer than any
backtick run inside it, so content can never close it), a unified diff between two versions,
and the "Current context" manifest that names the current version of every selected file.
`read_current_files` is the inverse: from a request's messages alone it rebuilds what the
model is told is current, which is how tests prove the model cannot be confused.
Invariant: formatting is pure; the same inputs give the same bytes.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from contextcore.objectview import ACTIVE_PREFIX
from contextcore.paths import shown

MANIFEST_HEADER = "# Current context"
_LABEL = re.compile(r"^(?P<path>.+) \(version (?P<v>\d+)(?:, diff against version (?P<b>\d+))?\)$")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_BLOCK_START = re.compile(r"^(?P<label>[^\n]+)\n(?P<fence>`{3,})(?:diff)?\n", re.M)
_MANIFEST_LINE = re.compile(r"^- (?P<path>.+): version (?P<v>\d+)$")


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


def _message_texts(messages: Iterable[Mapping[str, Any]]) -> list[str]:
    texts = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [b.get("text", "") for b in content if b.get("type") == "text"]
    return texts


def _blocks(text: str) -> Iterable[tuple[str, int, int | None, str]]:
    """(path, version, base version or None, body) for every labelled block in `text`."""
    pos = 0
    while match := _BLOCK_START.search(text, pos):
        label = _LABEL.match(match.group("label"))
        if not label:
            pos = match.start("fence")
            continue
        # The fence is longer than any backtick run in the body, so the first newline
        # followed by it closes the block.
        end = text.find("\n" + match.group("fence"), match.end() - 1)
        if end < 0:
            return
        base = int(label.group("b")) if label.group("b") else None
        yield label.group("path"), int(label.group("v")), base, text[match.end() : end]
        pos = end + 1 + len(match.group("fence"))


def read_current_files(messages: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """What the last manifest in `messages` says is current: {path: full content}.
    Raises KeyError when the manifest names a version the messages do not contain."""
    versions: dict[tuple[str, int], str] = {}
    manifest: dict[str, int] = {}
    for text in _message_texts(messages):
        if text.startswith(MANIFEST_HEADER):
            manifest = {
                m.group("path"): int(m.group("v"))
                for m in map(_MANIFEST_LINE.match, text.split("\n"))
                if m
            }
            continue
        for path, version, base, body in _blocks(text):
            if base is None:
                versions[(path, version)] = body
            elif (path, base) in versions:
                versions[(path, version)] = apply_diff(versions[(path, base)], body)
    return {path: versions[(path, v)] for path, v in manifest.items()}
