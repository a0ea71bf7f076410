"""A worker that died mid-reply (its lease expired, no `acdc serve` restarted): the worker a
tab reaches next ends the reply as interrupted, with its text and Retry, and tells the tabs;
whether the tab connects, sends a message or presses Stop."""

from __future__ import annotations

from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from chat.llm.fake import FakeStep
from history import services
from history.models import Message, Session
from tests.chat.sockets import connect, frames_until, new_session, send

pytestmark = pytest.mark.django_db(transaction=True)
DEAD_WORKER = "another-host:4242:abc"


@database_sync_to_async
def _reply_left_streaming(session: Session, *, lease_left: timedelta) -> Message:
    services.message_append(session=session, role="user", content="go on", turn_id="t1")
    reply = services.message_append(
        session=session, role="assistant", content="half of it", turn_id="t1", status="streaming"
    )
    _set_lease(session, lease_left)
    return reply


def _set_lease(session: Session, lease_left: timedelta) -> None:
    Session.objects.filter(pk=session.pk).update(
        turn_owner=DEAD_WORKER, turn_id="t1", turn_expires=timezone.now() + lease_left
    )


@database_sync_to_async
def _status(message: Message) -> str:
    return Message.objects.get(pk=message.pk).status


async def test_a_tab_that_connects_after_the_lease_expired_ends_the_reply_and_is_told():
    session = await new_session()
    reply = await _reply_left_streaming(session, lease_left=timedelta(seconds=-1))
    ws = await connect(session.id)
    frames = await frames_until(ws, services.INTERRUPTED_NOTE)
    assert "half of it" in frames[-1] and "Retry" in frames[-1]
    assert 'id="stop-button"' in frames[-1] and "disabled" in frames[-1]
    assert await _status(reply) == "interrupted"
    await ws.disconnect()


async def test_a_tab_that_connects_under_a_live_lease_leaves_the_reply_streaming():
    session = await new_session()
    reply = await _reply_left_streaming(session, lease_left=timedelta(minutes=5))
    ws = await connect(session.id)
    await ws.send_to(text_data="not json")  # answered only once connect has run
    assert "error" in (await frames_until(ws, 'role="alert"'))[-1]
    assert await _status(reply) == "streaming"
    await ws.disconnect()


async def test_a_message_sent_once_the_lease_expired_ends_the_dead_reply_first(fake):
    fake.enqueue(FakeStep(text="A fresh answer."))
    session = await new_session()
    reply = await _reply_left_streaming(session, lease_left=timedelta(minutes=5))
    ws = await connect(session.id)  # while the dead worker's lease still ran
    await database_sync_to_async(_set_lease)(session, timedelta(seconds=-1))
    await send(ws, message="Are you there?")
    frames = await frames_until(ws, 'data-status="complete"')
    ended = next(i for i, f in enumerate(frames) if services.INTERRUPTED_NOTE in f)
    started = next(i for i, f in enumerate(frames) if "Are you there?" in f)
    assert ended < started
    assert await _status(reply) == "interrupted"
    await ws.disconnect()


async def test_stop_on_a_reply_whose_worker_died_ends_it():
    session = await new_session()
    reply = await _reply_left_streaming(session, lease_left=timedelta(minutes=5))
    ws = await connect(session.id)
    await database_sync_to_async(_set_lease)(session, timedelta(seconds=-1))
    await send(ws, action="stop")
    await frames_until(ws, services.INTERRUPTED_NOTE)
    assert await _status(reply) == "interrupted"
    await ws.disconnect()


@pytest.mark.parametrize(("lease_left", "status"), [(-1, "interrupted"), (300, "streaming")])
async def test_a_page_load_ends_the_reply_only_once_its_lease_expired(
    async_client, lease_left, status
):
    session = await new_session()
    reply = await _reply_left_streaming(session, lease_left=timedelta(seconds=lease_left))
    response = await async_client.get(f"/s/{session.id}/")
    assert response.status_code == 200
    assert await _status(reply) == status
