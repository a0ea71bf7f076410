from __future__ import annotations

import pytest
from django.conf import settings

from history import services

pytestmark = pytest.mark.django_db


def test_the_index_opens_the_newest_session_of_the_repository(client):
    session = services.session_create(repository=str(settings.ACDC_REPO))
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"] == f"/s/{session.id}/"


def test_the_index_starts_a_session_when_there_is_none(client):
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"].startswith("/s/sess_")


def test_the_session_page_shows_its_messages_with_accessible_names(client):
    session = services.session_create(repository=str(settings.ACDC_REPO))
    services.message_append(session=session, role="user", content="What is in src?")
    services.message_append(session=session, role="assistant", content="**app.py**")
    html = client.get(f"/s/{session.id}/").content.decode()
    assert "What is in src?" in html
    assert "<strong>app.py</strong>" in html
    assert 'aria-label="Conversation"' in html
    assert '<label for="message-input"' in html and ">Message</label>" in html
    assert ">Send</button>" in html and ">Stop</button>" in html
    assert "htmx-2.min.js" in html and "hx-ws-2.min.js" in html


def test_an_unknown_session_is_a_clear_404(client):
    response = client.get("/s/sess_0_000000/")
    assert response.status_code == 404
    assert b"No such session" in response.content


def test_new_session_needs_post(client):
    assert client.get("/s/new/").status_code == 405
    response = client.post("/s/new/")
    assert response.status_code == 302
