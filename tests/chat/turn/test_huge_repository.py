"""The first message on a repository of 100,000 files, sent while its map is still being read.

The repository is real (100 folders of 1,000 tiny Python files, added to git in one go, on
a tmpfs where there is one);
the start-up build is held at its start (the map's lock taken, as a build of a huge
repository holds it for tens of seconds), so the turn meets a map that is not ready
however fast the machine. The turn must say so at once and answer without the map, not
wait for it: the lock is still held when the reply is complete.
"""

from __future__ import annotations

import asyncio
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from channels.db import database_sync_to_async
from django.test import override_settings

from chat.live.served import served
from chat.repo.repomap import engine
from chat.repo.repomap.builder import RepoMaps
from chat.session import Wired
from chat.turn.events import TurnNotice
from chat.turn.turns import TurnInput, TurnServices, run_turn
from history.models import Message
from tests.chat.sockets import WAIT, new_session

pytestmark = pytest.mark.django_db(transaction=True)
FOLDERS, PER_FOLDER = 100, 1000


@pytest.fixture
def huge(tmp_path):
    # In memory where the system has it: 100,000 files cost a disk's filesystem 6-16 s
    # to create, a tmpfs 1 s; what is measured is the turn, not the disk.
    shm = Path("/dev/shm")
    with tempfile.TemporaryDirectory(dir=shm if shm.is_dir() else tmp_path) as folder:
        root = Path(folder) / "huge"
        for number in range(FOLDERS):
            (root / f"pkg{number}").mkdir(parents=True)
            for name, text in _files(number):
                (root / f"pkg{number}" / name).write_text(text)
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
        with override_settings(ACDC_REPO=root, ACDC_MAP_TOKENS=2000):
            yield root


def _files(folder: int):
    for number in range(PER_FOLDER):
        yield f"m{number}.py", f"def f{number}():\n    return {folder * PER_FOLDER + number}\n"


async def test_the_first_message_is_told_and_answered_while_the_map_is_read(huge, fake):
    session = await new_session()
    maps, notices = RepoMaps(), []

    async def watch(event) -> None:
        if isinstance(event, TurnNotice):
            notices.append((time.monotonic(), event.text))

    maps._symbols_lock.acquire()  # the start-up build is still reading the repository
    try:
        warming = maps.warm_in_background(huge)
        sent = time.monotonic()
        turn = run_turn(
            TurnInput(session_id=session.id, user_text="What is in pkg7?", model="acdc/fake"),
            TurnServices(emit=watch, wiring=Wired(served().runtime, maps, served().repository)),
        )
        running = asyncio.create_task(turn)
        answered, _ = await asyncio.wait({running}, timeout=WAIT * 4)  # only a broken build
        still_reading = maps.warming(huge)
    finally:  # a turn that waits for the map ends once it is let go, and fails below
        await asyncio.to_thread(_stop_warming, maps, huge, warming)
    finished = await running

    assert answered and still_reading, "the turn waited for the map"
    assert finished.status == "complete"
    (told, notice), *_ = notices
    assert notice.startswith(engine.WARMING) and "then goes without the map" in notice
    assert told - sent < WAIT
    request = fake.requests[-1].messages
    assert "# Repository Structure" not in "\n".join(str(m.get("content")) for m in request)
    stored = await database_sync_to_async(_stored)(session)
    assert ("assistant", "complete") in stored


def _stored(session) -> list[tuple[str, str]]:
    return list(Message.objects.filter(session=session).values_list("role", "status"))


def _stop_warming(maps: RepoMaps, root, warming) -> None:
    """The held build is let go over an empty repository: 100,000 files left to parse
    would keep a core busy for the rest of the suite."""
    subprocess.run(["git", "-C", str(root), "rm", "-rqf", "."], check=True)
    maps._symbols_lock.release()
    warming.join(WAIT)


async def test_a_turn_the_server_stops_while_it_waits_for_the_map_stores_its_ending(root, fake):
    with override_settings(ACDC_REPO=root, ACDC_MAP_TOKENS=2000):
        session = await new_session()
        maps, told = RepoMaps(), asyncio.Event()

        async def watch(event) -> None:
            if isinstance(event, TurnNotice):
                told.set()

        maps._symbols_lock.acquire()  # the start-up build is still reading the repository
        try:
            warming = maps.warm_in_background(root)
            turn = run_turn(
                TurnInput(session_id=session.id, user_text="Hi", model="acdc/fake"),
                TurnServices(
                    emit=watch,
                    wiring=Wired(served().runtime, maps, served().repository),
                    stopping=lambda: True,
                ),
            )
            running = asyncio.create_task(turn)
            await asyncio.wait_for(told.wait(), WAIT)  # the turn now waits for the map
            running.cancel()  # what the turn host's close does to every hosted turn
            with pytest.raises(asyncio.CancelledError):
                await running
        finally:
            maps._symbols_lock.release()
            await asyncio.to_thread(warming.join, WAIT)

    stored = await database_sync_to_async(_stored)(session)
    assert stored == [("user", "complete"), ("assistant", "interrupted")]
