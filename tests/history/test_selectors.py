"""list_sessions and get_session: seed 000's session summaries and full sessions."""

from __future__ import annotations

import pytest

from history import selectors, services
from history.models import Image, Message, MessageImage, Session

pytestmark = pytest.mark.django_db


def _image(sha: str) -> Image:
    return Image.objects.create(
        sha256=sha, mime="image/png", width=1, height=1, size=1, data=b"x", thumbnail=b"y"
    )


def test_sessions_are_listed_newest_first_for_one_repository():
    old = services.session_create(repository="/repo")
    services.message_append(session=old, role="user", content="old question")
    services.session_create(repository="/elsewhere")
    new = services.session_create(repository="/repo")
    services.message_append(session=new, role="user", content="new question")
    ids = [s.session_id for s in selectors.list_sessions(repository="/repo")]
    assert ids == [new.id, old.id]


def test_a_summary_has_a_preview_count_and_first_role():
    session = services.session_create(repository="/repo")
    services.message_append(session=session, role="user", content="  word\n" * 60)
    services.message_append(session=session, role="assistant", content="answer")
    summary = selectors.list_sessions(repository="/repo")[0]
    assert summary.message_count == 2
    assert summary.first_role == "user"
    assert summary.preview.startswith("word word")
    assert len(summary.preview) <= 100 and summary.preview.endswith("…")
    assert summary.title.startswith("word word")


def test_an_empty_session_is_listed_with_no_preview():
    services.session_create(repository="/repo")
    summary = selectors.list_sessions(repository="/repo")[0]
    assert (summary.message_count, summary.preview, summary.first_role) == (0, "", "")
    assert summary.title == "Untitled session"


def test_the_limit_caps_the_list():
    for _ in range(5):
        services.session_create(repository="/repo")
    assert len(selectors.list_sessions(repository="/repo", limit=3)) == 3


def test_get_session_returns_every_message_in_order_with_metadata_and_images():
    session = services.session_create(repository="/repo", model="acdc/fake")
    first = services.message_append(
        session=session, role="user", content="look", files=["src/app.py"]
    )
    services.message_append(session=session, role="assistant", content="seen")
    MessageImage.objects.create(message=first, image=_image("b" * 64), position=1)
    MessageImage.objects.create(message=first, image=_image("a" * 64), position=0)
    detail = selectors.get_session(session_id=session.id)
    assert [m.content for m in detail.messages] == ["look", "seen"]
    assert detail.messages[0].files == ["src/app.py"]
    assert detail.session.model == "acdc/fake"
    assert [i.sha256 for i in detail.images[first.id]] == ["a" * 64, "b" * 64]
    assert detail.message_count == 2


def test_get_session_of_an_unknown_id_is_none():
    assert selectors.get_session(session_id="sess_0_000000") is None
    assert Session.objects.count() == 0 and Message.objects.count() == 0
