"""The model's grep, run on the text the model is shown: a redacted value is no oracle.

`git grep` reads the files as they are on the disk, so a regex that spells part of a
credential would answer whether the guess was right, although every tool shows a marker in
its place. `search` asks git as before and also, case-blind, which files may hold a
credential (`credentials.CANDIDATE_LINE`, looser than the shapes, so no file that holds
one is missed). Those that do are searched again as the model reads them, redacted, by git
grep on a private copy (the same regex dialect, time limit and output), and their lines on
the disk are dropped; one that cannot be read and redacted answers nothing. A file with no
credential reads the same either way, so a repository costs one more `git grep -l`.
Non-goals: which paths the model may see (the caller's `visible`), the tool's output text.
"""

from __future__ import annotations

import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from chat.repo import credentials, git, indexing

Line = tuple[str, str, str]  # path, line number, text: as git.grep gives them
# A file that may hold a credential and is larger than this is not searched at all.
MAX_SCANNED_BYTES = 16_000_000


@dataclass(frozen=True)
class Found:
    lines: list[Line]
    undecodable: int  # names git gave that are not valid UTF-8
    redacted: frozenset[str] = frozenset()  # the paths answered from their redacted text

    def redacted_kinds(self, lines: Iterable[Line]) -> tuple[str, ...]:
        """The kind of each value redacted in those of `lines` read from a redacted text."""
        return tuple(
            kind for path, _, text in lines if path in self.redacted
            for kind in credentials.markers(text)
        )  # fmt: skip


def search(
    repo: indexing.Repository,
    pattern: str,
    below: str,
    *,
    seconds: float,
    visible: Callable[[Iterable[str]], list[str]],
) -> Found:
    """`git.grep`'s answer for `pattern` below `below`, with each file that holds a
    credential searched as redacted; only `visible` paths are read or answered."""
    deadline = time.monotonic() + seconds
    found, undecodable = git.grep(repo.root, pattern, below, seconds=seconds)
    candidates = git.grep_paths(
        repo.root, credentials.CANDIDATE_LINE, below, seconds=_left(deadline)
    )
    redacted = _redacted(repo, visible(candidates), deadline)
    if not redacted:
        return Found(found, undecodable)
    lines = [line for line in found if line[0] not in redacted]
    lines += _search_copies(redacted, pattern, _left(deadline))
    lines.sort(key=lambda line: line[0])  # stable: a file's lines stay in their order
    return Found(lines, undecodable, frozenset(redacted))


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise git.GrepFailed("the search took too long; use a simpler pattern or a folder")
    return left


def _redacted(
    repo: indexing.Repository, paths: list[str], deadline: float
) -> dict[str, str | None]:
    """Each of `paths` that holds a credential, as its redacted text; None for one that
    may and cannot be read (its lines are left out rather than answered from the disk)."""
    texts: dict[str, str | None] = {}
    for path in paths:
        _left(deadline)
        text = _text(repo, path)
        if text is None:
            texts[path] = None
            continue
        redaction = credentials.redact(text)
        if redaction.found:
            texts[path] = redaction.text
    return texts


def _text(repo: indexing.Repository, path: str) -> str | None:
    """The file's text as git grep reads it (invalid UTF-8 replaced); None when it cannot
    be read or is no regular file. `path` has passed the boundary as git listed it (git
    descends into no symlinked folder), and a symlink itself is not followed."""
    try:
        descriptor = os.open(repo.root / path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except (OSError, ValueError):
        return None
    with os.fdopen(descriptor, "rb") as file:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SCANNED_BYTES:
            return None
        try:
            return file.read().decode("utf-8", "replace")
        except OSError:
            return None


def _search_copies(texts: dict[str, str | None], pattern: str, seconds: float) -> list[Line]:
    """git grep over a private folder holding the redacted texts at their paths."""
    with tempfile.TemporaryDirectory(prefix="acdc-grep-") as folder:
        base = Path(folder)
        for path, text in texts.items():
            if text is None:
                continue
            copy = base / path
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(text.encode("utf-8", "surrogatepass"))
        found, _ = git.grep(base, pattern, seconds=seconds, every_file=True)
    return found
