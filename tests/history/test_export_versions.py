"""Versions of a message in History and in exports: each labelled "version n of m", with
whether it is the one in view, so a download shows the same branches as the chat."""

from __future__ import annotations

import json

import pytest
from django.conf import settings
from django.test import Client

from history import selectors, services
from history.interchange.export import session_to_jsonl, session_to_markdown
from history.models import Message

pytestmark = pytest.mark.django_db


def _versions():
    session = services.session_create(repository=str(settings.ACDC_REPO), title="Parser talk")
    first = services.message_append(session=session, role="user", content="Explain the parser")
    services.message_append(session=session, role="assistant", content="First answer.")
    Message.objects.filter(session=session).update(rolled_back=True)
    second = services.message_append(
        session=session, role="user", content="Explain the parser", alt_of=first.id
    )
    services.message_append(session=session, role="assistant", content="Second answer.")
    return selectors.get_session(session_id=session.id), first, second


def test_markdown_labels_each_version_and_the_one_out_of_view():
    detail, _, _ = _versions()
    text = session_to_markdown(detail.session, detail.messages)
    assert "version 1 of 2, not in view" in text
    assert text.count("version 2 of 2") == 1 and "version 2 of 2, not" not in text


def test_jsonl_names_the_first_version_and_which_is_in_view():
    detail, first, second = _versions()
    records = [
        json.loads(line) for line in session_to_jsonl(detail.session, detail.messages).splitlines()
    ]
    mine = [r for r in records if r["role"] == "user"]
    assert [(r["version_of"], r["version"], r["in_view"]) for r in mine] == [
        (first.id, [1, 2], False),
        (first.id, [2, 2], True),
    ]
    assert "version" not in records[1]  # a reply is not itself a version


def test_the_history_page_shows_the_versions():
    detail, _, _ = _versions()
    html = Client().get(f"/history/{detail.session.id}/").content.decode()
    assert "Version 1 of 2, not in view" in html and "Version 2 of 2<" in html
