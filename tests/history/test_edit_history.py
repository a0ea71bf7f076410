"""A reply's edits in History and in exports: the session view lists them under the reply
(path and result line), Markdown has a section of them, and JSON Lines carries
`files_modified` and `edit_results` in AC-DC's own field names, which import reads back."""

from __future__ import annotations

import json

import pytest
from django.conf import settings

from history import selectors, services
from history.images import DecodeGate
from history.interchange.export import session_to_jsonl, session_to_markdown
from history.interchange.importer import import_history
from history.models import Message

pytestmark = pytest.mark.django_db
RESULTS = [
    {"tool": "read_file", "args": "src/app.py", "status": "ok", "call_id": "c1"},
    {"edit": 7, "path": "src/app.py", "kind": "replace", "status": "applied",
     "result": "applied: src/app.py v1→v2, +1 −1", "call_id": "c2", "block": None},
    {"edit": 8, "path": "src/gone.py", "kind": "replace", "status": "failed",
     "result": "failed: src/gone.py: the old text was not found\nclosest lines: …",
     "call_id": "", "block": 0},
]  # fmt: skip


def edited_session():
    session = services.session_create(repository=str(settings.ACDC_REPO), title="Edits talk")
    services.message_append(session=session, role="user", content="Change app")
    said = services.message_append(
        session=session, role="assistant", content="Changed.", edit_results=RESULTS
    )
    Message.objects.filter(pk=said.pk).update(files_modified=["src/app.py"])
    return selectors.get_session(session_id=session.id)


def test_the_history_view_lists_each_edit_under_its_reply(client):
    detail = edited_session()
    html = client.get(f"/history/{detail.session.id}/").content.decode()
    assert '<ul class="edit-lines" aria-label="Edits in this reply">' in html
    assert "<code>src/app.py</code>" in html and "applied: src/app.py v1→v2, +1 −1" in html
    assert "failed: src/gone.py: the old text was not found" in html
    assert "closest lines" not in html  # the result line only
    assert "read_file" not in html.split("edit-lines", 1)[1]  # a tool call is not an edit


def test_markdown_export_has_a_section_of_the_replys_edits():
    detail = edited_session()
    text = session_to_markdown(detail.session, detail.messages)
    assert "Changed.\n\n### Edits\n\n- `src/app.py`: applied: src/app.py v1→v2, +1 −1\n" in text
    assert "- `src/gone.py`: failed: src/gone.py: the old text was not found\n" in text
    assert text.count("### Edits") == 1


def test_an_ac_dc_reply_with_only_files_modified_lists_them_as_modified():
    session = services.session_create(repository="/repo", title="From AC-DC")
    said = services.message_append(session=session, role="assistant", content="Done.")
    Message.objects.filter(pk=said.pk).update(files_modified=["a.py"])
    detail = selectors.get_session(session_id=session.id)
    assert "### Edits\n\n- `a.py`: modified\n" in session_to_markdown(
        detail.session, detail.messages
    )


def test_json_lines_carry_both_fields_and_import_reads_them_back(tmp_path):
    detail = edited_session()
    exported = session_to_jsonl(detail.session, detail.messages)
    reply = json.loads(exported.splitlines()[1])
    assert reply["files_modified"] == ["src/app.py"] and reply["edit_results"] == RESULTS
    Message.objects.all().delete()
    detail.session.delete()
    (tmp_path / "history.jsonl").write_text(exported)
    assert (
        import_history(
            tmp_path / "history.jsonl", repository="/elsewhere", decodes=DecodeGate()
        ).imported
        == 2
    )
    back = Message.objects.get(role="assistant")
    assert back.files_modified == ["src/app.py"] and back.edit_results == RESULTS
