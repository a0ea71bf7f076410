"""FileContext: the files the user selected, with their contents, keyed by repo path.

Invariants: keys are repo-root-relative POSIX paths (backslashes turned to slashes, outer
slashes stripped, no `..` segment); nothing outside the repository (also via symlinks),
nothing binary (NUL bytes or not UTF-8) and nothing over the size cap gets in, and every
refusal carries a reason the UI can show. An optional `guard` (the caller's repository
boundary: contextcore knows no policy of its own) is asked before any file is opened, on
every read and re-read; a non-empty answer is the refusal's reason. Insertion order is
kept (it is the prompt order) and re-adding a path updates it in place. Non-goals: git
status, watching the disk (the caller calls `refresh()` before each request).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from contextcore.prompt.revisions import format_file_block
from contextcore.tokens import TokenCounter

DEFAULT_SIZE_CAP = 1_000_000


@dataclass(frozen=True)
class AddResult:
    """Outcome of `FileContext.add_file`; falsy when the file was refused, with `reason`."""

    ok: bool
    path: str
    reason: str = ""

    def __bool__(self) -> bool:
        return self.ok


class PathRejected(ValueError):
    pass


def normalize_path(path: str) -> str:
    """Repo-relative key for `path`; raises PathRejected for traversal or empty paths."""
    key = path.replace("\\", "/").strip("/")
    while key.startswith("./"):
        key = key[2:]
    if not key:
        raise PathRejected("empty path")
    if any(part == ".." for part in key.split("/")):
        raise PathRejected("path traversal ('..') is not allowed")
    return key


def check_text(data: bytes, size_cap: int) -> tuple[str | None, str]:
    """Decode file bytes, or give the reason they are refused."""
    if len(data) > size_cap:
        return None, f"too large ({len(data):,} bytes; the limit is {size_cap:,})"
    if b"\0" in data:
        return None, "binary file (contains NUL bytes)"
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError:
        return None, "binary file (not valid UTF-8 text)"


Guard = Callable[[str], str]  # repo-relative key -> why it may not be read ("" if it may)


class FileContext:
    def __init__(
        self,
        repo_root: Path | None = None,
        *,
        size_cap: int = DEFAULT_SIZE_CAP,
        guard: Guard | None = None,
    ):
        self.repo_root = repo_root.resolve() if repo_root is not None else None
        self.size_cap = size_cap
        self.guard = guard
        self._files: dict[str, str] = {}
        # (mtime_ns, size) of files read from disk, so `refresh` re-reads only what changed.
        self._stamps: dict[str, tuple[int, int]] = {}
        self.pinned: set[str] = set()

    def add_file(self, path: str, content: str | None = None) -> AddResult:
        """Add `path` (reading it from disk when `content` is None); update it if present."""
        try:
            key = normalize_path(path)
        except PathRejected as exc:
            return AddResult(False, path, str(exc))
        if content is not None:
            text, reason = check_text(content.encode("utf-8", "surrogatepass"), self.size_cap)
            if text is None:
                return AddResult(False, key, reason)
            self._files[key] = content
            self._stamps.pop(key, None)
            return AddResult(True, key)
        return self._add_from_disk(key)

    def _resolve(self, key: str) -> Path:
        if self.repo_root is None:
            raise PathRejected("no repository to read from")
        full = (self.repo_root / key).resolve()
        if not full.is_relative_to(self.repo_root):
            raise PathRejected("resolves outside the repository")
        return full

    def _add_from_disk(self, key: str) -> AddResult:
        reason = self.guard(key) if self.guard is not None else ""
        if reason:
            return AddResult(False, key, reason)
        try:
            full = self._resolve(key)
            stat = full.stat()
        except PathRejected as exc:
            return AddResult(False, key, str(exc))
        except OSError:
            return AddResult(False, key, "no such file")
        if not full.is_file():
            return AddResult(False, key, "not a regular file")
        if stat.st_size > self.size_cap:
            return AddResult(
                False, key, f"too large ({stat.st_size:,} bytes; the limit is {self.size_cap:,})"
            )
        try:
            data = full.read_bytes()
        except OSError as exc:
            return AddResult(False, key, f"cannot be read ({exc.strerror})")
        text, reason = check_text(data, self.size_cap)
        if text is None:
            return AddResult(False, key, reason)
        self._files[key] = text
        try:
            self._stamps[key] = _stamp(self.repo_root / key)
        except OSError:
            self._stamps[key] = (0, 0, 0, 0)  # gone since it was read: the next refresh sees it
        return AddResult(True, key)

    def refresh(self) -> list[AddResult]:
        """Re-read files that changed on disk. Returns one result per changed or dropped
        file; a file that vanished or became unacceptable is removed (result not ok)."""
        results = []
        for key, stamp in list(self._stamps.items()):
            # A plain stat (no path resolution) each turn; the inode in the stamp means a
            # symlink re-pointed elsewhere is noticed and goes through the full checks.
            try:
                if _stamp(self.repo_root / key) == stamp:
                    continue
            except OSError:
                pass
            before = self._files[key]
            result = self._add_from_disk(key)
            if not result.ok:
                self.remove_file(key)
                results.append(result)
            elif self._files[key] != before:
                results.append(result)
        return results

    def remove_file(self, path: str) -> bool:
        try:
            key = normalize_path(path)
        except PathRejected:
            return False
        self._stamps.pop(key, None)
        self.pinned.discard(key)
        return self._files.pop(key, None) is not None

    @contextmanager
    def trial(self) -> Iterator[None]:
        """Changes made inside are undone on leaving (to ask "what would be shed?")."""
        files, stamps, pinned = dict(self._files), dict(self._stamps), set(self.pinned)
        try:
            yield
        finally:
            self._files, self._stamps, self.pinned = files, stamps, pinned

    def get_files(self) -> list[str]:
        """Paths in context, sorted (for display); `items()` gives prompt order."""
        return sorted(self._files)

    def items(self) -> list[tuple[str, str]]:
        """(path, content) in insertion order: the order files appear in the prompt."""
        return list(self._files.items())

    def from_disk(self, path: str) -> bool:
        """True when the file was read from disk (and can be re-read), not handed in."""
        return path in self._stamps

    def get_content(self, path: str) -> str | None:
        try:
            return self._files.get(normalize_path(path))
        except PathRejected:
            return None

    def has_file(self, path: str) -> bool:
        return self.get_content(path) is not None

    def clear(self) -> None:
        self._files.clear()
        self._stamps.clear()
        self.pinned.clear()

    def format_for_prompt(self) -> str:
        return "\n\n".join(format_file_block(path, text) for path, text in self._files.items())

    def count_tokens(self, counter: TokenCounter) -> int:
        return sum(self.get_tokens_by_file(counter).values())

    def get_tokens_by_file(self, counter: TokenCounter) -> dict[str, int]:
        paths = list(self._files)
        counts = counter.count_many([format_file_block(p, self._files[p]) for p in paths])
        return dict(zip(paths, counts, strict=True))


def _stamp(path: Path) -> tuple[int, int, int, int]:
    stat = os.stat(path)
    return (stat.st_mtime_ns, stat.st_size, stat.st_ino, stat.st_dev)
