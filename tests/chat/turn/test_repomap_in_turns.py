"""The repository map through real turns: built from the served repository and the session's
selection, byte-identical while nothing changes, a small delta after one file is edited."""

from __future__ import annotations

import asyncio
import os

import pytest
from channels.db import database_sync_to_async
from django.test import override_settings

from chat.live.served import served
from chat.repo import sessionsets
from chat.repo.repomap import engine
from chat.repo.repomap.builder import RepoMaps
from chat.session import Wired
from chat.turn.events import TurnNotice
from chat.turn.turns import TurnInput, TurnServices, run_turn
from tests import serving
from tests.chat.repo.polyglot import FILES
from tests.chat.sockets import new_session

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def repo_files():
    return {**FILES, "secrets.py": "def leaked_api_key():\n    return 'k'\n"}


@pytest.fixture
def repo_is_git():
    return True


@pytest.fixture
def root(root):
    with override_settings(ACDC_REPO=root, ACDC_MAP_TOKENS=2000):
        yield root


async def ignore(event) -> None:
    return None


async def turn(session, fake, text: str) -> list[dict]:
    await run_turn(
        TurnInput(session_id=session.id, user_text=text, model="acdc/fake"),
        TurnServices(emit=ignore, wiring=served()),
    )
    return fake.requests[-1].messages


def text(message) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


async def test_the_map_reaches_the_system_message_and_stays_put(root, fake):
    session = await new_session()
    await database_sync_to_async(sessionsets.set_active_files)(
        session, ["py/main.py"], repo=serving.repository()
    )

    first = await turn(session, fake, "What does run do?")
    second = await turn(session, fake, "And make_invoice?")

    system = text(first[0])
    assert "# Repository Structure\n" in system
    assert "py/shapes.py:\n  SIDES = 4\n  class Shape" in system
    assert "func NewServer(port int) *Server" in system
    assert "leaked_api_key" not in system and "secrets.py" not in system
    assert text(second[0]) == system
    # Everything the questions name is in the map or the context already: no focus.
    assert not [m for m in second if text(m).startswith("# Repository focus")]


async def test_a_small_map_leaves_what_the_question_names_to_the_focus(root, fake):
    session = await new_session()
    await database_sync_to_async(sessionsets.set_active_files)(
        session, ["py/main.py"], repo=serving.repository()
    )

    with override_settings(ACDC_MAP_TOKENS=160):
        first = await turn(session, fake, "hello")
        second = await turn(session, fake, "Why is make_invoice slow?")

    assert "make_invoice" not in text(second[0])
    assert text(second[0]) == text(first[0])
    focus = [text(m) for m in second if text(m).startswith("# Repository focus")]
    assert len(focus) == 1 and "function make_invoice(string $id): Invoice" in focus[0]
    assert second.index(next(m for m in second if "# Repository focus" in text(m))) > 2


async def test_an_edited_file_changes_the_map_only_after_the_prefix(root, fake):
    session = await new_session()
    first = await turn(session, fake, "hello")
    source = root / "go/server.go"
    source.write_text(
        FILES["go/server.go"].replace("NewServer(port int)", "NewServer(port, n int)")
    )
    os.utime(source, ns=(1, 1))

    second = await turn(session, fake, "again")

    assert text(second[0]) == text(first[0])
    updates = [text(m) for m in second if "The repository map changed" in text(m)]
    assert len(updates) == 1
    assert "+  func NewServer(port, n int) *Server" in updates[0]
    assert "-  func NewServer(port int) *Server" in updates[0]
    assert "rust/geometry.rs" not in updates[0]


async def test_a_map_of_zero_tokens_is_no_map(root, fake):
    session = await new_session()
    with override_settings(ACDC_MAP_TOKENS=0):
        sent = await turn(session, fake, "hello")

    assert "# Repository Structure" not in text(sent[0])


async def test_a_turn_during_the_start_up_build_says_so_and_waits_for_the_map(root, fake):
    session = await new_session()
    await database_sync_to_async(sessionsets.set_active_files)(
        session, ["py/main.py"], repo=serving.repository()
    )
    maps, said = RepoMaps(), asyncio.Event()
    notices: list[str] = []

    async def watch(event) -> None:
        if isinstance(event, TurnNotice):
            notices.append(event.text)
            said.set()

    # The turn is handed the maps a start-up build is still warming.
    maps._symbols_lock.acquire()  # the start-up build is still reading the repository
    try:
        maps.warm_in_background(root)
        turn = run_turn(
            TurnInput(session_id=session.id, user_text="Hi", model="acdc/fake"),
            TurnServices(emit=watch, wiring=Wired(served().runtime, maps, served().repository)),
        )
        running = asyncio.create_task(turn)
        # the notice comes first; a turn that ended without one fails below, not hangs
        await asyncio.wait(
            {running, asyncio.ensure_future(said.wait())},
            return_when=asyncio.FIRST_COMPLETED,
            timeout=120,  # only a broken build gets near this
        )
    finally:
        maps._symbols_lock.release()
    await running

    assert notices[0].startswith(engine.WARMING)
    assert "py/shapes.py:\n  SIDES = 4\n  class Shape" in text(fake.requests[-1].messages[0])
