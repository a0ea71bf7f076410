"""The file watcher: fake file events where timing does not matter, the real one once."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
import watchfiles
from channels.db import database_sync_to_async

from chat.repo import sessionsets
from chat.repo.edits.disk import OwnWrites
from chat.repo.repomap.builder import RepoMaps
from chat.repo.watcher import RepositoryWatcher, WatcherRegistry
from history import services

pytestmark = pytest.mark.django_db(transaction=True)


def watching(registry: WatcherRegistry, repo) -> bool:
    """Whether the registry's watcher task for `repo` runs (one per repository)."""
    task = registry._tasks.get(str(repo.root))
    return task is not None and not task.done()


@pytest.fixture
def repo_files():
    return {
        "src/gen/": "",
        "src/app.py": "print('v1')\n",
        "notes.md": "notes\n",
        ".gitignore": "*.log\n",
        "src/.gitignore": "gen/\n",
        ".git/info/exclude": "secret.txt\n",
    }


def parts() -> dict:
    """What a served object hands its watchers: repository maps and acdc's own writes."""
    return {"maps": RepoMaps(), "own_writes": OwnWrites()}


def events(root, *batches):
    """An event source yielding the given batches of (change, relative path)."""

    async def source():
        for batch in batches:
            yield {(change, str(root / path)) for change, path in batch}

    return source


async def watch(repo, source) -> list:
    heard: list = []

    async def on_change(changes) -> None:
        heard.extend(changes)

    await RepositoryWatcher(repo, on_change, **parts(), changes_source=source).run()
    return heard


@database_sync_to_async
def session_with(repo, *paths):
    session = services.session_create(repository=str(repo.root))
    for path in paths:
        sessionsets.activate(session, path, repo=repo)
    return session


async def test_an_edit_of_a_known_file_makes_a_new_version_for_every_session(repo, root):
    first = await session_with(repo, "src/app.py")
    second = await session_with(repo, "src/app.py")
    (root / "src" / "app.py").write_text("print('v2')\n")
    heard = await watch(repo, events(root, [(watchfiles.Change.modified, "src/app.py")]))
    [change] = heard
    assert change.outcome == "updated" and set(change.sessions) == {first.id, second.id}
    entry = next(
        e for e in await database_sync_to_async(sessionsets.entries)(first, repo) if e.path
    )
    assert entry.content == "print('v2')\n" and entry.active  # the sets did not change


async def test_ignored_paths_and_unknown_files_are_told_apart(repo, root):
    await session_with(repo, "src/app.py")
    for path in ("debug.log", "src/gen/out.py", "secret.txt", "new.py"):
        (root / path).write_text("x\n")
    heard = await watch(
        repo,
        events(
            root,
            [
                (watchfiles.Change.added, "debug.log"),
                (watchfiles.Change.added, "src/gen/out.py"),
                (watchfiles.Change.added, "secret.txt"),
                (watchfiles.Change.modified, ".git/index"),
                (watchfiles.Change.added, ".acdc/acdc.sqlite3"),
                (watchfiles.Change.added, "new.py"),
            ],
        ),
    )
    assert [(c.path, c.outcome) for c in heard] == [("new.py", "seen")]


async def test_a_deleted_file_gets_a_null_version_and_a_touch_changes_nothing(repo, root):
    session = await session_with(repo, "src/app.py", "notes.md")
    (root / "notes.md").unlink()
    (root / "src" / "app.py").touch()
    heard = await watch(
        repo,
        events(
            root,
            [(watchfiles.Change.deleted, "notes.md"), (watchfiles.Change.modified, "src/app.py")],
        ),
    )
    assert sorted((c.path, c.outcome) for c in heard) == [
        ("notes.md", "deleted"),
        ("src/app.py", "unchanged"),
    ]
    entries = {e.path: e for e in await database_sync_to_async(sessionsets.entries)(session, repo)}
    assert entries["notes.md"].deleted and entries["notes.md"].content is None


async def test_the_registry_runs_one_watcher_until_the_last_page_leaves(repo, root):
    registry = WatcherRegistry(**parts())
    gate = asyncio.Event()

    async def source():
        await gate.wait()
        yield set()

    async def on_change(changes) -> None:
        return None

    await registry.attach(repo, on_change, changes_source=source)
    await registry.attach(repo, on_change, changes_source=source)
    assert watching(registry, repo)
    await registry.detach(repo)
    assert watching(registry, repo)
    await registry.detach(repo)
    await asyncio.sleep(0)
    assert not watching(registry, repo)


async def test_the_real_watcher_sees_an_edit_on_disk(repo, root):
    session = await session_with(repo, "src/app.py")
    heard: list = []
    news = asyncio.Event()

    async def on_change(changes) -> None:
        heard.extend(changes)
        news.set()

    async def until_heard(what, *, poke=None) -> None:
        """Wait until a change matching `what` is heard; `poke` (re)makes one meanwhile."""
        async with asyncio.timeout(60):
            while not any(what(c) for c in heard):
                news.clear()
                if poke:
                    poke()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(news.wait(), 2)

    registry = WatcherRegistry(**parts())
    await registry.attach(repo, on_change)
    try:
        # The OS watch is on once the watcher hears a file no session knows; one written
        # before it started goes unheard, so the probe is written again until it is heard.
        probes = iter(range(1_000_000))
        await until_heard(
            lambda c: c.path == "probe.txt",
            poke=lambda: (root / "probe.txt").write_text(f"{next(probes)}\n"),
        )
        (root / "src" / "app.py").write_text("print('edited on disk')\n")
        await until_heard(lambda c: c.outcome == "updated")
    finally:
        await registry.detach(repo)
    assert any(c.path == "src/app.py" and c.outcome == "updated" for c in heard)
    entry = next(e for e in await database_sync_to_async(sessionsets.entries)(session, repo))
    assert entry.content == "print('edited on disk')\n"


async def test_project_instructions_coming_going_or_changing_are_told_at_once(repo, root):
    told: list[str] = []

    async def on_change(changes) -> None:
        pass

    (root / "AGENTS.md").write_text("# Rules\n")
    source = events(
        root,
        [(watchfiles.Change.modified, "notes.md")],  # not an instructions file
        [(watchfiles.Change.added, "AGENTS.md")],
        [(watchfiles.Change.deleted, ".github/copilot-instructions.md")],
    )
    watcher = RepositoryWatcher(
        repo,
        on_change,
        **parts(),
        changes_source=source,
        on_instructions=lambda: told.append("now"),
    )
    await watcher.run()
    assert told == ["now", "now"]
