"""The repository map while a file watcher runs: heard changes only, and the full look when
nothing can be trusted. File events are fed to a real watcher; git's listing is counted
through a wrapper that calls the real one."""

from __future__ import annotations

import asyncio

import pytest
import watchfiles

from chat.repo import git
from chat.repo.edits.disk import OwnWrites
from chat.repo.repomap.builder import RepoMaps
from chat.repo.watcher import RepositoryWatcher, WatcherRegistry
from contextcore.tokens import TokenCounter

pytestmark = pytest.mark.django_db(transaction=True)
COUNTER = TokenCounter()
FILES = {
    "app/main.py": "from util.text import slug\ndef run():\n    return slug('x')\n",
    "util/text.py": "def slug(text: str) -> str: ...\n",
    "other/report.py": "from util.text import slug\ndef report(): return slug('r')\n",
    "docs/notes.txt": "notes\n",
    ".gitignore": "*.log\n",  # the ignore files exist: a change to one is no new path
    ".acdcignore": "*.secret-notes\n",
}


@pytest.fixture
def repo_files():
    return FILES


@pytest.fixture
def repo_is_git():
    return True


@pytest.fixture
def listings(monkeypatch) -> list:
    """Every root git was asked to list, from now on."""
    calls: list = []
    real = git.list_files

    def counted(root, below=""):
        calls.append(root)
        return real(root, below)

    monkeypatch.setattr(git, "list_files", counted)
    return calls


class Events:
    """The watcher's event source: `deliver` hands it one batch and returns once the
    watcher has dealt with it (it asks for the next). An empty batch says the watch is on.
    `ended` is set once the watcher stopped taking events (detached, crashed)."""

    def __init__(self, root) -> None:
        self.root = root
        self.batches: asyncio.Queue = asyncio.Queue()
        self.asked = asyncio.Event()
        self.ended = asyncio.Event()

    async def source(self):
        try:
            while True:
                self.asked.set()
                batch = await self.batches.get()
                if isinstance(batch, Exception):
                    raise batch
                yield batch
        finally:
            self.ended.set()

    async def deliver(self, *paths: str, change=watchfiles.Change.modified) -> None:
        self.asked.clear()
        await self.batches.put({(change, str(self.root / p)) for p in paths})
        await asyncio.wait_for(self.asked.wait(), 30)


def build(root, maps):
    return maps.build(root, budget=4000, count=COUNTER.count_text, selected=["app/main.py"])


def fresh(root):
    built = build(root, RepoMaps())
    return built.main, built.focus, built.tiers


async def noop(changes) -> None:
    return None


@pytest.fixture
async def watched(repo, root):
    """A map, and a watcher on `root` that told it the watch is on."""
    maps, events = RepoMaps(), Events(root)
    registry = WatcherRegistry(maps, OwnWrites())
    await registry.attach(repo, noop, changes_source=events.source)
    await events.deliver()
    yield maps, events
    await registry.detach(repo)


async def test_a_heard_edit_shows_in_the_next_map_without_listing_again(watched, root, listings):
    maps, events = watched
    first = build(root, maps)
    (root / "util/text.py").write_text("def slug(text: str, sep: str = '-') -> str: ...\n")
    await events.deliver("util/text.py")

    second = build(root, maps)

    assert len(listings) == 1  # the first build's
    assert second.parsed == 1 and first.parsed > 1
    assert "def slug(text: str, sep: str = '-') -> str" in second.main
    assert (second.main, second.focus, second.tiers) == fresh(root)


async def test_a_heard_new_file_appears(watched, root):
    maps, events = watched
    build(root, maps)
    (root / "util/extra.py").write_text("def shout(text: str) -> str: ...\n")
    await events.deliver("util/extra.py", change=watchfiles.Change.added)

    built = build(root, maps)

    assert "def shout(text: str) -> str" in built.main
    assert (built.main, built.focus, built.tiers) == fresh(root)


async def test_a_heard_deletion_disappears(watched, root):
    maps, events = watched
    assert "other/report.py" in build(root, maps).main
    (root / "other/report.py").unlink()
    await events.deliver("other/report.py", change=watchfiles.Change.deleted)

    built = build(root, maps)

    assert "other/report.py" not in built.main
    assert (built.main, built.focus, built.tiers) == fresh(root)


@pytest.mark.parametrize(
    ("control", "text"),
    [(".gitignore", "other/\n"), (".git/info/exclude", "other/\n"), (".acdcignore", "other/*\n")],
)
async def test_a_heard_change_of_an_ignore_file_lists_again(watched, root, listings, control, text):
    maps, events = watched
    assert "other/report.py" in build(root, maps).main
    (root / control).parent.mkdir(parents=True, exist_ok=True)
    (root / control).write_text(text)
    await events.deliver(control)

    built = build(root, maps)

    assert len(listings) == 2
    assert "other/report.py" not in built.main
    assert (built.main, built.focus, built.tiers) == fresh(root)


def test_without_a_watcher_every_build_looks_at_every_file(root, listings):
    maps = RepoMaps()
    build(root, maps)
    (root / "util/text.py").write_text("def slug(text: str, sep: str = '-') -> str: ...\n")

    built = build(root, maps)

    assert "def slug(text: str, sep: str = '-') -> str" in built.main
    assert len(listings) == 2


async def test_an_edit_before_the_watch_was_on_is_seen_by_the_first_build_after(repo, root):
    maps, events = RepoMaps(), Events(root)
    registry = WatcherRegistry(maps, OwnWrites())
    build(root, maps)  # no watcher yet
    await registry.attach(repo, noop, changes_source=events.source)
    (root / "util/text.py").write_text("def slug(text: str, sep: str = '-') -> str: ...\n")
    await events.deliver()  # the watch is on now; the edit came before it: never heard
    try:
        built = build(root, maps)
    finally:
        await registry.detach(repo)

    assert "def slug(text: str, sep: str = '-') -> str" in built.main


async def test_after_the_watcher_leaves_an_unheard_edit_is_still_seen(repo, root):
    maps, events = RepoMaps(), Events(root)
    registry = WatcherRegistry(maps, OwnWrites())
    await registry.attach(repo, noop, changes_source=events.source)
    await events.deliver()
    build(root, maps)
    await registry.detach(repo)  # the last page left
    await events.ended.wait()
    (root / "util/text.py").write_text("def slug(text: str, sep: str = '-') -> str: ...\n")

    built = build(root, maps)

    assert "def slug(text: str, sep: str = '-') -> str" in built.main


async def test_after_the_watcher_crashes_an_unheard_edit_is_still_seen(repo, root):
    maps, events = RepoMaps(), Events(root)
    running = asyncio.create_task(
        RepositoryWatcher(
            repo, noop, maps=maps, own_writes=OwnWrites(), changes_source=events.source
        ).run()
    )
    await events.deliver()
    build(root, maps)
    await events.batches.put(RuntimeError("the watch broke"))
    with pytest.raises(RuntimeError):
        await running
    (root / "util/text.py").write_text("def slug(text: str, sep: str = '-') -> str: ...\n")

    built = build(root, maps)

    assert "def slug(text: str, sep: str = '-') -> str" in built.main


async def test_an_editors_temporary_file_that_came_and_went_lists_nothing_again(
    watched, root, listings
):
    maps, events = watched
    build(root, maps)
    (root / "util/text.py~").write_text("def slug(text: str) -> str: ...\n")
    (root / "util/text.py~").unlink()
    (root / "util/text.py").write_text("def slug(text: str, sep: str = '-') -> str: ...\n")
    await events.deliver("util/text.py~", "util/text.py")

    built = build(root, maps)

    assert len(listings) == 1
    assert "def slug(text: str, sep: str = '-') -> str" in built.main


async def test_a_folder_moved_away_takes_its_files_with_it(watched, root, tmp_path):
    maps, events = watched
    build(root, maps)
    (root / "other").rename(tmp_path / "moved")
    await events.deliver("other", change=watchfiles.Change.deleted)  # no event per file

    built = build(root, maps)

    assert "other/report.py" not in built.main
    assert (built.main, built.focus, built.tiers) == fresh(root)
