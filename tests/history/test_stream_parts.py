"""A streaming reply is saved as parts beside its row; the row, and so the search index,
gets the text once: when the turn ends it, or when a worker finds it left by a dead one."""

from __future__ import annotations

import pytest

from chat.session import end_dead_turns, end_expired_turn
from history import selectors, services
from history.models import Message
from history.search import search_messages
from history.stream.parts import StreamPart, stream_append
from tests.history.content_writes import content_writes, written

pytestmark = pytest.mark.django_db
PIECES = ("The wombat ", "digs a burrow ", "under the shed.")


def _streamed_reply(session=None) -> Message:
    """A reply whose worker saved three parts and then died (no lease holds the session)."""
    session = session or services.session_create(repository="/repo", model="acdc/fake")
    reply = services.message_append(
        session=session, role="assistant", content="", turn_id="t1", status="streaming"
    )
    shown = ""
    for piece in PIECES:
        stream_append(message_id=reply.id, offset=len(shown), text=piece)
        shown += piece
    return reply


def _found(word: str) -> list[str]:
    return [hit.message_id for hit in search_messages(repository="/repo", query=word).hits]


def test_a_page_drawn_while_the_reply_streams_shows_what_was_saved():
    reply = _streamed_reply()
    rows = selectors.session_messages(session=reply.session)
    assert rows[-1].content == "".join(PIECES)
    assert _found("wombat") == []  # the search index waits for the end


def test_a_reply_left_by_a_dead_worker_is_indexed_once_when_found_after_a_restart():
    with content_writes():
        reply = _streamed_reply()
        assert end_dead_turns() == 1
        reply.refresh_from_db()
        assert (reply.status, reply.content) == ("interrupted", "".join(PIECES))
        assert written(reply.id) == [0, len("".join(PIECES))]  # made empty, then its text once
    assert _found("burrow") == [reply.id]
    assert not StreamPart.objects.exists()


def test_a_reply_streaming_before_parts_keeps_its_text_and_gains_its_parts():
    session = services.session_create(repository="/repo", model="acdc/fake")
    reply = services.message_append(
        session=session, role="assistant", content="Saved whole: ", turn_id="t1", status="streaming"
    )
    stream_append(message_id=reply.id, offset=13, text="then a part.")
    assert end_expired_turn(session.id) == 1
    reply.refresh_from_db()
    assert reply.content == "Saved whole: then a part."


def test_an_ended_reply_is_written_once_and_its_parts_go():
    with content_writes():
        reply = _streamed_reply()
        services.message_finish(
            message_id=reply.id, content="".join(PIECES), status=Message.Status.COMPLETE
        )
        assert written(reply.id) == [0, len("".join(PIECES))]
    assert not StreamPart.objects.filter(message_id=reply.id).exists()
    assert _found("shed") == [reply.id]


def test_deleting_a_session_takes_the_parts_of_its_streaming_reply():
    reply = _streamed_reply()
    reply.session.delete()
    assert not StreamPart.objects.exists()
