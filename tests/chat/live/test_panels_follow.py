"""Open tabs follow their session (chat/live/follower.py): the version says which panels changed,
and a tab learns of a change made by another process without asking."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async
from django.db.models.sql.compiler import SQLCompiler
from django.test import override_settings

from acdc.asgi import application
from chat.live.follower import PanelFollower
from chat.repo import instructions
from chat.session import checkpoints, release_lease, take_lease, version
from chat.session.version import page_token
from chat.web.broadcast import session_socket_url
from history import services
from history.models import Message, Session
from tests import serving
from tests.chat.sockets import ORIGIN, WAIT, Socket, frames_until, new_session

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_version_names_the_panel_each_change_touches(session):
    first = version.read(session.id, serving.repository().root)
    checkpoints.take(session, label="mine")
    taken = version.read(session.id, serving.repository().root)
    assert taken.changed(first) == {"tools"}
    Session.objects.filter(pk=session.pk).update(model="acdc/dry-run")
    chosen = version.read(session.id, serving.repository().root)
    assert chosen.changed(taken) == {"model"}
    services.message_append(session=session, role=Message.Role.USER, content="hi")
    assert version.read(session.id, serving.repository().root).changed(chosen) == {
        "conversation",
        "hud",
    }


def test_a_session_whose_turn_holds_the_lease_is_busy(session):
    owner = take_lease(session.id, "turn_1")
    assert version.read(session.id, serving.repository().root).busy
    release_lease(session.id, owner)
    assert not version.read(session.id, serving.repository().root).busy
    assert version.read("sess_nobody", serving.repository().root) is None


def test_reading_the_version_builds_its_query_once_and_reads_what_the_orm_reads(
    session, monkeypatch
):
    version.read(session.id, serving.repository().root)  # built here, or by an earlier test
    built = []
    real = SQLCompiler.as_sql
    monkeypatch.setattr(
        SQLCompiler, "as_sql", lambda self, *a, **k: built.append(1) or real(self, *a, **k)
    )
    for grounding in (None, True, False):
        Session.objects.filter(pk=session.pk).update(grounding=grounding)
        services.message_append(session=session, role=Message.Role.USER, content="hi")
        built.clear()
        read = version.read(session.id, serving.repository().root)
        assert built == [], "the version query was built again"
        row = version.queryset(session.id)[0]
        assert (
            read.parts["hud"]
            == f"{row['updated_at'].isoformat()}|{instructions.mark(serving.repository().root)}"
        )
        assert read.parts["tools"].endswith(f":{row['grounding']}")
        assert read.parts["conversation"].startswith(f"{row['last_seq']}:{row['last_status']}:")


@database_sync_to_async
def _turn_from_another_process(session_id: str) -> None:
    """What `acdc chat` leaves in the shared database: rows, and no channel message."""
    session = Session.objects.get(pk=session_id)
    services.message_append(session=session, role=Message.Role.USER, content="From the CLI")
    services.message_append(session=session, role=Message.Role.ASSISTANT, content="Its answer")
    Session.objects.filter(pk=session_id).update(model="acdc/dry-run")


async def _open_page(session_id: str) -> Socket:
    """A tab's socket as the page connects it: with the version the page drew."""
    seen = await database_sync_to_async(page_token)(session_id, serving.repository().root)
    tab = Socket(application, session_socket_url(session_id, seen=seen), ORIGIN)
    connected, _ = await tab.connect()
    assert connected
    return tab


def _shows_the_turn(frames: list[str]) -> None:
    shown = "".join(frames)
    assert "From the CLI" in shown and "Its answer" in shown  # the conversation, drawn again
    assert 'data-model="acdc/dry-run"' in shown  # panels.js fetches the model box again
    assert 'id="session-title"' in frames[-1] and "From the CLI" in frames[-1]


@override_settings(ACDC_PANEL_POLL_MS=100)
async def test_an_open_tab_gets_a_turn_another_process_stored():
    session = await new_session()
    tab = await _open_page(session.id)
    await _turn_from_another_process(session.id)
    _shows_the_turn(await frames_until(tab, 'id="panels-stale"'))
    await tab.disconnect()


async def test_a_turn_stored_while_the_page_loaded_reaches_its_socket():
    session = await new_session()
    seen = await database_sync_to_async(page_token)(session.id, serving.repository().root)
    await _turn_from_another_process(session.id)  # after the page was drawn, before it connects
    tab = Socket(application, session_socket_url(session.id, seen=seen), ORIGIN)
    assert (await tab.connect())[0]
    _shows_the_turn(await frames_until(tab, 'id="panels-stale"'))
    await tab.disconnect()


async def test_instructions_that_came_while_a_turn_ran_reach_the_panel_after_it(
    served_root, served
):
    (served_root / "AGENTS.md").unlink(missing_ok=True)
    session = await new_session()
    follower, listed = PanelFollower(served.host, served.tabs), asyncio.Event()

    async def tab(html: str) -> None:
        if "<code>AGENTS.md</code>" in html:
            listed.set()

    served.tabs.add(session.id, "tab-1", tab)
    try:
        await follower.watch(
            session.id,
            await database_sync_to_async(page_token)(session.id, serving.repository().root),
            tab,
        )
        (served_root / "AGENTS.md").write_text("Run the tests first.\n")
        # The watcher's nudge came while a turn ran (a hosted session is not looked at);
        # then the turn ended, having drawn a HUD figured before the file came.
        follower.drawn(session.id, "conversation", "hud")
        follower.nudge(session.id)
        await asyncio.wait_for(listed.wait(), timeout=WAIT)
    finally:
        served.tabs.discard(session.id, "tab-1")
        await follower.close()


async def test_the_socket_reads_its_query_percent_decoded():
    session = await new_session()
    seen = await database_sync_to_async(page_token)(session.id, serving.repository().root)
    await _turn_from_another_process(session.id)
    escaped = session_socket_url(session.id, seen=seen).replace(".", "%2E")  # as a client may
    tab = Socket(application, escaped, ORIGIN)
    assert (await tab.connect())[0]
    _shows_the_turn(await frames_until(tab, 'id="panels-stale"'))
    await tab.disconnect()
