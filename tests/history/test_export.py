"""Export formatters: Markdown for reading, JSON Lines in AC-DC's history.jsonl schema."""

from __future__ import annotations

import json

import pytest

from history import selectors, services
from history.export import image_ref, session_to_jsonl, session_to_markdown

pytestmark = pytest.mark.django_db


def _session():
    session = services.session_create(repository="/repo", title="Parser talk")
    services.message_append(session=session, role="user", content="What is *this*?")
    services.message_append(session=session, role="assistant", content="A parser.")
    return selectors.get_session(session_id=session.id)


def test_markdown_has_the_title_and_each_message_under_its_speaker():
    detail = _session()
    text = session_to_markdown(detail.session, detail.messages)
    assert text.startswith("# Parser talk\n")
    assert "## You · " in text and "## acdc · " in text
    assert "What is *this*?" in text and text.endswith("A parser.\n")


def test_jsonl_lines_follow_the_history_schema():
    detail = _session()
    first = detail.messages[0]
    refs = {first.id: [image_ref("c" * 64, "image/jpeg")]}
    lines = session_to_jsonl(detail.session, detail.messages, refs).splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["role"] for r in records] == ["user", "assistant"]
    assert set(records[0]) == {
        "id",
        "session_id",
        "timestamp",
        "role",
        "content",
        "files",
        "files_modified",
        "edit_results",
        "image_refs",
    }
    assert records[0]["id"] == first.id and records[0]["session_id"] == detail.session.id
    assert records[0]["timestamp"].endswith("Z")
    assert records[0]["image_refs"] == ["c" * 64 + ".jpg"] and records[1]["image_refs"] == []
