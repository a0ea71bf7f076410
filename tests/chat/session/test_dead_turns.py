"""A reply left streaming by a worker that died ends as interrupted when any worker next
looks at the session, never while a turn still holds a live lease."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from chat.session import end_expired_turn
from history import services
from history.models import Message, Session

pytestmark = pytest.mark.django_db


def _reply_left_streaming(*, lease_left: timedelta) -> Message:
    """A session whose turn t1 streamed half a reply under another host's lease."""
    session = services.session_create(repository="x", model="acdc/fake")
    services.message_append(session=session, role="user", content="go", turn_id="t1")
    reply = services.message_append(
        session=session, role="assistant", content="half of it", turn_id="t1", status="streaming"
    )
    Session.objects.filter(pk=session.pk).update(
        turn_owner="another-host:4242:abc", turn_id="t1", turn_expires=timezone.now() + lease_left
    )
    return reply


def test_a_reply_whose_lease_expired_ends_as_interrupted_with_its_text():
    reply = _reply_left_streaming(lease_left=timedelta(seconds=-1))
    assert end_expired_turn(reply.session_id) == 1
    reply.refresh_from_db()
    assert (reply.status, reply.content) == ("interrupted", "half of it")
    assert reply.error == services.INTERRUPTED_NOTE
    assert end_expired_turn(reply.session_id) == 0


def test_a_reply_under_a_live_lease_keeps_streaming():
    reply = _reply_left_streaming(lease_left=timedelta(seconds=30))
    assert end_expired_turn(reply.session_id) == 0
    reply.refresh_from_db()
    assert reply.status == "streaming"


def test_a_live_turn_keeps_its_reply_while_an_older_dead_one_ends():
    dead = _reply_left_streaming(lease_left=timedelta(seconds=30))
    session = dead.session
    services.message_append(session=session, role="user", content="again", turn_id="t2")
    live = services.message_append(
        session=session, role="assistant", content="now", turn_id="t2", status="streaming"
    )
    Session.objects.filter(pk=session.pk).update(turn_id="t2")
    assert end_expired_turn(session.pk) == 1
    dead.refresh_from_db()
    live.refresh_from_db()
    assert (dead.status, live.status) == ("interrupted", "streaming")
