"""The session's "Check after applying edits" in the page's own path: a tab sends a message,
Auto-apply writes the reply's edits, the check (a declared command, real bubblewrap) runs
and fails, and its cut output goes back to the model once, as the session's next turn;
that turn's edits apply and the check runs again, and is never sent back a second time.
Accept all of a reply that waited for review starts the check the same way.
The setting itself is a small POST, refused with the declared names for an unknown one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from django.test import Client

from chat.llm.fake import FakeStep
from chat.repo.commands import declaring
from chat.turn import checking
from history.models import CommandRun, Message, Session
from tests.chat.repo.commands_support import PYTHON
from tests.chat.sockets import WAIT, connect, new_session, send, stored

pytestmark = pytest.mark.django_db(transaction=True)
BROKEN = "def add(a, b):\n    return a - b\n"
CHECK = 'from calc import add\n\nassert add(2, 3) == 5, f"add(2, 3) gave {add(2, 3)}"\n'


@pytest.fixture
def repo_files() -> dict[str, str]:
    return {"calc.py": BROKEN, "check.py": CHECK}


@pytest.fixture
def idle(served) -> Iterator[dict[str, asyncio.Event]]:
    """An event per session, set once the served turn host has nothing left to do for it."""
    events: dict[str, asyncio.Event] = {}
    host = served.host
    before = host.on_idle

    def on_idle(session_id: str) -> None:
        before(session_id)
        events.setdefault(session_id, asyncio.Event()).set()

    host.on_idle = on_idle
    yield events
    host.on_idle = before


def edit(old: str, new: str, call_id: str) -> FakeStep:
    arguments = {"path": "calc.py", "old_text": old, "new_text": new}
    return FakeStep(tool_calls=[{"id": call_id, "name": "edit_file", "arguments": arguments}])


@database_sync_to_async
def checked_session(root) -> Session:
    declaring.add(str(root), "test", [PYTHON, "-B", "check.py"])
    session = Session.objects.create(repository=str(root), model="acdc/fake", auto_apply=True)
    checking.set_check(session, "test")
    return session


async def talk(session: Session, idle: dict[str, asyncio.Event], text: str) -> list[Message]:
    event = idle.setdefault(session.id, asyncio.Event())
    tab = await connect(session.id)
    await send(tab, message=text)
    await asyncio.wait_for(event.wait(), WAIT)
    await tab.disconnect()
    return await stored(session)


def checks(rows: list[Message]) -> list[str]:
    return [
        m.edit_results[0]["status"]
        for m in rows
        if m.role == Message.Role.TOOL and m.edit_results[0]["tool"] == "check"
    ]


async def test_a_failed_check_goes_back_once_and_the_fix_is_checked_again(fake, served_root, idle):
    session = await checked_session(served_root)
    fake.enqueue(
        edit("a - b", "a * b", "c1"),
        FakeStep(text="Changed the operator."),
        edit("a * b", "a + b", "c2"),
        FakeStep(text="Fixed."),
    )

    rows = await talk(session, idle, "make add right")

    assert (served_root / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert checks(rows) == ["fail", "ok"]
    users = [m.content for m in rows if m.role == Message.Role.USER]
    assert users[0] == "make add right"
    assert users[1].startswith("acdc ran the check `test` (`")
    assert "AssertionError: add(2, 3) gave 6" in users[1]
    assert fake.requests[2].messages[-1]["content"] == users[1]  # the fix round's request
    # Appended after the first turn: its reply comes before, unchanged, in the request.
    sent = [m.get("content") or "" for m in fake.requests[2].messages]
    assert any(text.endswith("Changed the operator.") for text in sent)
    runs = await database_sync_to_async(list)(CommandRun.objects.filter(session=session))
    assert [(r.name, r.exit_code, r.sandboxed) for r in runs] == [
        ("test", 1, True),
        ("test", 0, True),
    ]


async def test_a_fix_that_still_fails_is_not_sent_back_again(fake, served_root, idle):
    session = await checked_session(served_root)
    fake.enqueue(
        edit("a - b", "a * b", "c1"),
        FakeStep(text="Changed."),
        edit("a * b", "a ** b", "c2"),
        FakeStep(text="Changed again."),
        FakeStep(text="A third turn nobody asked for."),
    )

    rows = await talk(session, idle, "make add right")

    assert checks(rows) == ["fail", "fail"]
    assert [m.role for m in rows].count(Message.Role.USER) == 2
    assert len(fake.requests) == 4


async def test_no_check_while_the_edits_wait_for_review(fake, served_root, idle):
    session = await checked_session(served_root)
    await database_sync_to_async(Session.objects.filter(pk=session.pk).update)(auto_apply=False)
    fake.enqueue(edit("a - b", "a * b", "c1"), FakeStep(text="Changed, for review."))

    rows = await talk(session, idle, "make add right")

    assert checks(rows) == [] and (served_root / "calc.py").read_text() == BROKEN
    assert not await database_sync_to_async(CommandRun.objects.exists)()


async def test_no_check_without_the_setting(fake, served_root, idle):
    session = await new_session()
    await database_sync_to_async(Session.objects.filter(pk=session.pk).update)(auto_apply=True)
    await database_sync_to_async(declaring.add)(str(served_root), "test", [PYTHON, "check.py"])
    fake.enqueue(edit("a - b", "a * b", "c1"), FakeStep(text="Changed."))

    rows = await talk(session, idle, "make add right")

    assert (served_root / "calc.py").read_text() == "def add(a, b):\n    return a * b\n"
    assert checks(rows) == []
    assert not await database_sync_to_async(CommandRun.objects.exists)()


def test_the_setting_is_a_declared_name_or_off(served_root, session):
    declaring.add(str(served_root), "test", ["true"])
    client = Client()
    url = f"/s/{session.id}/check/"

    assert client.post(url, {"name": "test"}).status_code == 204
    session.refresh_from_db()
    assert session.check_command == "test"
    refused = client.post(url, {"name": "tset"})
    assert refused.status_code == 400
    assert refused.content.decode() == "there is no declared command 'tset'; declared: test"
    assert client.post(url, {"name": ""}).status_code == 204
    session.refresh_from_db()
    assert session.check_command == ""
    assert client.post("/s/nosuch/check/", {"name": "test"}).status_code == 404


async def test_accept_all_runs_the_check_and_its_failure_goes_back_once(fake, served_root, idle):
    session = await checked_session(served_root)
    await database_sync_to_async(Session.objects.filter(pk=session.pk).update)(auto_apply=False)
    fake.enqueue(
        edit("a - b", "a * b", "c1"),
        FakeStep(text="Changed, for review."),
        edit("a * b", "a + b", "c2"),
        FakeStep(text="Fixed, for review."),
    )
    event = idle.setdefault(session.id, asyncio.Event())
    tab = await connect(session.id)
    await send(tab, message="make add right")
    await asyncio.wait_for(event.wait(), WAIT)
    event.clear()
    reply = [m for m in await stored(session) if m.role == Message.Role.ASSISTANT][-1]
    assert checks(await stored(session)) == []  # pending review: nothing checked yet

    accepted = await sync_to_async(Client().post)(f"/m/{reply.id}/edits/", {"op": "accept"})
    assert accepted.status_code == 204
    await asyncio.wait_for(event.wait(), WAIT)
    await tab.disconnect()

    rows = await stored(session)
    assert checks(rows) == ["fail"]  # the fix waits for review: not checked yet
    users = [m.content for m in rows if m.role == Message.Role.USER]
    assert len(users) == 2 and "AssertionError: add(2, 3) gave 6" in users[1]
    assert (served_root / "calc.py").read_text() == "def add(a, b):\n    return a * b\n"
    fixed = [m for m in rows if m.role == Message.Role.ASSISTANT][-1]
    assert fixed.content == "Fixed, for review."
    assert await database_sync_to_async(checking.claim_due)(session.id) == ""  # taken once
