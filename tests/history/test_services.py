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
