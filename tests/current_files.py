"""What a request's messages say is current: the inverse of contextcore.prompt.revisions.

`read_current_files` rebuilds, from the messages alone, the content the model is told is
current (the last manifest's versions, diffs applied to their base), which is how tests
prove the model cannot be confused. A test helper: the product never reads a prompt back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from contextcore.prompt.revisions import MANIFEST_HEADER, apply_diff

_LABEL = re.compile(r"^(?P<path>.+) \(version (?P<v>\d+)(?:, diff against version (?P<b>\d+))?\)$")
_BLOCK_START = re.compile(r"^(?P<label>[^\n]+)\n(?P<fence>`{3,})(?:diff)?\n", re.M)
_MANIFEST_LINE = re.compile(r"^- (?P<path>.+): version (?P<v>\d+)$")


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
