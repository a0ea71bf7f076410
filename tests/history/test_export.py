"""Export formatters: Markdown for reading, JSON Lines in AC-DC's history.jsonl schema."""

from __future__ import annotations

import json

import pytest

from history import selectors, services
from history.interchange.export import image_ref, session_to_jsonl, session_to_markdown

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


def _mentioned():
    session = services.session_create(repository="/repo", title="Mentions")
    mentions = [
        {"kind": "file", "path": "docs/a `b`\nc.md", "symbol": "", "line": 0},
        {"kind": "symbol", "path": "src/utils.py", "symbol": "slugify", "line": 1},
    ]
    message = services.message_append(session=session, role="user", content="See these")
    message.mentions = mentions
    message.save(update_fields=["mentions"])
    services.message_append(session=session, role="assistant", content="Seen.")
    return selectors.get_session(session_id=session.id), mentions


def test_markdown_names_a_messages_mentions_as_code_whatever_the_path_holds():
    detail, _ = _mentioned()
    text = session_to_markdown(detail.session, detail.messages)
    assert (
        "See these\n\nMentioned: ``@docs/a `b` c.md``, `@slugify` (`src/utils.py:1`, outline)\n"
        in text
    )


def test_jsonl_carries_the_mentions_of_a_message_that_has_them():
    detail, mentions = _mentioned()
    records = [
        json.loads(line) for line in session_to_jsonl(detail.session, detail.messages).splitlines()
    ]
    assert records[0]["mentions"] == mentions
    assert "mentions" not in records[1]  # the schema's keys only, when there are none
