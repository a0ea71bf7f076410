"""Files sent as their outline: the text that stands for the file, and its token counts.

The picker's third state beside off and full (and the `outline` flag of the activate
tool): an active file whose link says `outline` goes into the prompt as the signatures the
`outline` tool renders, under a label saying it is an outline, so the model knows the
bodies are elided. Outlines come from the repository map's symbol cache (by content
hash), so counting them for the picker parses each file once per content; the picker's
counts run as one background pass per repository (chat.repo.passes), however many tabs
ask at once.
Non-goals: parsing and rendering (chat.repo.repomap), the sets (chat.repo.sessionsets).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from chat.repo import boundary
from chat.repo.passes import Passes
from chat.repo.repomap import builder
from chat.repo.repomap.builder import RepoMaps
from chat.repo.repomap.render import outline_text
from chat.repo.repomap.symbols import LANGUAGES, language_of
from contextcore.tokens import TokenCounter

LABEL = "(outline: signatures only, bodies elided)"
BATCH = 200  # files per progress report of the background count


def text(root: Path, path: str, maps: RepoMaps) -> str:
    """What the prompt holds for `path` sent as an outline; ValueError with a reason."""
    return f"{LABEL}\n{builder.outline(root, path, maps)}"


def suffixes() -> list[str]:
    """The file suffixes that have an outline (the picker offers the state only to those)."""
    return sorted(LANGUAGES)


class OutlineCounts:
    """The process's outline counts, by (repository, path), remembered with the file's
    (size, mtime); outlines come from `maps`, are counted with `counter`, and background
    counts run on `passes`. One for the process (the served object holds it)."""

    def __init__(self, maps: RepoMaps, counter: TokenCounter, passes: Passes) -> None:
        self.maps, self.counter, self.passes = maps, counter, passes
        self._known: dict[tuple[str, str], tuple[tuple[int, int], int]] = {}

    def counts(self, root: Path, paths: Iterable[str]) -> dict[str, int]:
        """Tokens of each outlinable path's outline, as the prompt would hold it. Locked,
        internal and unreadable files have none (they are left out). Remembered by the
        file's (size, mtime), so `known` answers again without reading."""
        root = Path(root).resolve()
        screened = boundary.screen([p for p in paths if language_of(p)], root=root)
        found, stamps = {}, {}
        for path in screened.kept:
            stamp = _stamp(root, path)
            if path in screened.locked or stamp is None:
                continue
            symbols, _ = self.maps.file_symbols(root, path)
            found[path] = f"{LABEL}\n{outline_text(path, symbols)}"
            stamps[path] = stamp
        tokens = dict(zip(found, self.counter.count_many(list(found.values())), strict=True))
        for path, count in tokens.items():
            self._known[(str(root), path)] = (stamps[path], count)
        return tokens

    def count_in_background(
        self, root: Path, paths: list[str], progress: Callable[[dict[str, int]], None]
    ) -> bool:
        """Count the outlines `known` does not have yet, in a background pass unless one
        already runs for `root`, handing `progress` each batch's counts; returns whether a
        new pass started (a caller that joined a running one may want `known` meanwhile)."""
        return self.passes.start(
            "outline", Path(root), lambda: self._count_all(root, paths, progress)
        )

    def _count_all(
        self, root: Path, paths: list[str], progress: Callable[[dict[str, int]], None]
    ) -> None:
        have = self.known(root, paths)
        todo = [p for p in paths if p not in have]
        for start in range(0, len(todo), BATCH):
            found = self.counts(root, todo[start : start + BATCH])
            if found:
                progress(found)

    def known(self, root: Path, paths: Iterable[str]) -> dict[str, int]:
        """The outline counts `counts` found for files unchanged since (stat only)."""
        root = Path(root).resolve()
        found = {}
        for path in paths:
            seen = self._known.get((str(root), path))
            if seen is not None and seen[0] == _stamp(root, path):
                found[path] = seen[1]
        return found

    def peek(self, root: Path, paths: Iterable[str]) -> dict[str, int]:
        """The outline counts last found for `paths`, without a stat (a folder's total)."""
        base = str(Path(root).resolve())
        seen = ((path, self._known.get((base, path))) for path in paths)
        return {path: found[1] for path, found in seen if found is not None}


def _stamp(root: Path, path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(os.path.join(root, path))
    except OSError:
        return None
    return (info.st_size, info.st_mtime_ns) if stat.S_ISREG(info.st_mode) else None
