"""The repository's files as the Files panel's pages were drawn from them, kept for the
process: each listing screened (locked files apart), each folder's files, and which files
the pages were given rows of. `FilesPanel` is what the panel reads of what the process
serves (token counts, outline counts, listings); the served object holds the one.
`TreeAsk` is a tab's ask for its rows again (the socket's `rows` frame).
Non-goals: drawing the rows (chat.web.panels), counting (picker, outlines).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from chat.repo import boundary, git
from chat.repo.outlines import OutlineCounts
from chat.repo.picker import TokenCounts


@dataclass
class Listing:
    """The repository's files as the last update saw them, and each folder's files."""

    paths: list[str]
    locked: dict[str, str]
    listed: list[str]  # the listing it was made from
    folders: dict[str, list[str]] = field(default_factory=dict)
    # The files whose rows the pages were given (drawn in a listing, or sent as news): a
    # listing read again for another reader (a panel's rows) does not make a new file
    # known to the pages, so the watcher's news still brings its row.
    announced: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, repo: Path, paths: list[str]) -> Listing:
        screened = boundary.screen(paths, root=repo)
        listing = cls(list(screened.kept), dict(screened.locked), list(paths))
        for path in listing.paths:
            for folder in folders_of(path):
                listing.folders.setdefault(folder, []).append(path)
        return listing


class FileListings:
    """The listing of each repository the pages were drawn from, kept for the process
    (the served object holds the one), with the files the pages were given rows of."""

    def __init__(self) -> None:
        self._known: dict[str, Listing] = {}

    def of(self, repo: Path, paths: list[str] | None = None) -> Listing:
        """The cached listing of `repo`, made again when `paths` (the repository's listing
        now, read again when not given) differs from the one it was made from."""
        paths = git.list_files(repo).paths if paths is None else paths
        known = self._known.get(str(repo))
        if known is None or paths != known.listed:
            fresh = Listing.of(repo, paths)
            fresh.announced = set(known.announced) if known is not None else set(paths)
            known = self._known[str(repo)] = fresh
        return known

    def unlisted(self, repo: Path, paths: Iterable[str]) -> list[str]:
        """Those of `paths` whose rows the pages were never given (the watcher's new
        files), whoever read the listing again in the meantime."""
        known = self._known.get(str(repo))
        held = known.announced if known is not None else set()
        return [p for p in paths if p not in held]

    def known_folders(self, repo: Path) -> set[str] | None:
        """The folders of the listing the pages were last drawn from (None before any)."""
        known = self._known.get(str(repo))
        return set(known.folders) if known is not None else None

    def announce(self, repo: Path, added: Iterable[str], removed: Iterable[str] = ()) -> None:
        """The pages were sent these files' rows (or told they are gone)."""
        known = self._known.get(str(repo))
        if known is not None:
            known.announced.update(added)
            known.announced.difference_update(removed)


@dataclass(frozen=True)
class FilesPanel:
    """What the Files panel reads of what the process serves: the files' token counts,
    their outlines' counts, and the listings the pages were drawn from."""

    counts: TokenCounts
    outlines: OutlineCounts
    listings: FileListings


def folders_of(path: str) -> list[str]:
    parts = path.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


@dataclass(frozen=True)
class TreeAsk:
    """A tab's ask for its rows again (a `rows` frame on its socket): the filter's list
    (`found`, best first, of `matched`; `coming` while the page has not its list of paths)
    or, when `found` is None, the tree with the folders `opened`. `shown` names the sets
    the tab's rows were drawn from when news of other sets asked for it."""

    found: tuple[str, ...] | None = None
    matched: int = 0
    coming: bool = False
    opened: tuple[str, ...] = ()
    shown: str = ""
