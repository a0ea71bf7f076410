"""A streamed reply saved many times on its way writes its text to the message row, and so
to the search index, once: the saves in between append parts beside the row."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from channels.db import database_sync_to_async

from chat.live.served import served
from chat.llm.fake import FakeStep
from chat.turn import reply
from chat.turn.events import TurnDelta
from chat.turn.turns import TurnInput, TurnServices, run_turn
from history.models import Message
from history.search import search_messages
from history.stream.parts import StreamPart
from tests.chat.sockets import new_session
from tests.history.content_writes import content_writes, written

pytestmark = pytest.mark.django_db(transaction=True)
ANSWER = "The capybara " + "swims across the river and back again, " * 12 + "then rests."


@pytest.fixture
def logged() -> Iterator[None]:
    with content_writes():
        yield


@pytest.fixture
def save_at_every_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    """The once-a-second save at every chunk: many saves without waiting for the clock."""
    monkeypatch.setattr(reply, "SAVE_EVERY_SECONDS", 0.0)


def _reply_and_parts(session_id: str) -> tuple[Message, int]:
    reply = Message.objects.get(session_id=session_id, role="assistant")
    return reply, StreamPart.objects.filter(message_id=reply.id).count()


async def test_a_reply_saved_at_every_chunk_reaches_the_index_once(
    fake, logged, save_at_every_chunk
):
    session = await new_session()
    fake.enqueue(FakeStep(text=ANSWER, chunk_size=40))
    saved_while_streaming: list[int] = []

    async def emit(event) -> None:
        if isinstance(event, TurnDelta):
            parts = await database_sync_to_async(
                lambda: StreamPart.objects.filter(message__session_id=session.id).count()
            )()
            saved_while_streaming.append(parts)

    finished = await run_turn(
        TurnInput(session_id=session.id, user_text="Tell me a story"),
        TurnServices(emit=emit, wiring=served()),
    )
    assert finished.status == "complete" and finished.text == ANSWER
    assert max(saved_while_streaming) >= 10  # the reply was saved again and again
    reply, parts = await database_sync_to_async(_reply_and_parts)(session.id)
    assert (reply.content, parts) == (ANSWER, 0)
    assert await database_sync_to_async(written)(reply.id) == [0, len(ANSWER)]
    hits = await database_sync_to_async(
        lambda: search_messages(repository=session.repository, query="capybara").hits
    )()
    assert [hit.message_id for hit in hits] == [reply.id]
