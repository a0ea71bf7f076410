from __future__ import annotations

import pytest

from history import selectors, services
from history.models import Message

pytestmark = pytest.mark.django_db


def test_messages_are_appended_in_order_and_grouped_by_session():
    one = services.session_create(repository="/repo")
    two = services.session_create(repository="/repo")
    services.message_append(session=one, role="user", content="first")
    services.message_append(session=two, role="user", content="elsewhere")
    services.message_append(session=one, role="assistant", content="second")
    assert [m.content for m in selectors.session_messages(session=one)] == ["first", "second"]
    assert [m.seq for m in selectors.session_messages(session=one)] == [0, 1]


def test_the_first_user_message_titles_the_session():
    session = services.session_create(repository="/repo")
    services.message_append(session=session, role="user", content="Explain   the\nparser " * 20)
    session.refresh_from_db()
    assert session.title.startswith("Explain the parser")
    assert len(session.title) <= 80


def test_the_latest_session_is_per_repository():
    services.session_create(repository="/a")
    newest_b = services.session_create(repository="/b")
    assert selectors.session_latest(repository="/b") == newest_b
    assert selectors.session_latest(repository="/nowhere") is None


def test_context_messages_are_role_and_content_only_without_system_events():
    session = services.session_create(repository="/repo")
    services.message_append(session=session, role="user", content="q")
    services.message_append(session=session, role="system", content="note", system_event=True)
    services.message_append(session=session, role="assistant", content="a")
    assert selectors.session_messages_for_context(session=session) == [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a"},
    ]


def test_finishing_a_message_records_status_usage_and_error():
    session = services.session_create(repository="/repo")
    message = services.message_append(
        session=session, role="assistant", content="", status=Message.Status.STREAMING
    )
    services.message_finish(
        message_id=message.id,
        content="partial",
        status="error",
        usage={"prompt_tokens": 3},
        error="boom",
    )
    message.refresh_from_db()
    assert (message.content, message.status, message.usage, message.error) == (
        "partial",
        "error",
        {"prompt_tokens": 3},
        "boom",
    )


def test_a_row_left_streaming_reads_as_interrupted():
    session = services.session_create(repository="/repo")
    message = services.message_append(
        session=session, role="assistant", content="half", status=Message.Status.STREAMING
    )
    assert message.was_interrupted
