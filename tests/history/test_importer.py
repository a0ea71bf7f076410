from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image as PILImage

from history.images import DecodeGate
from history.interchange.importer import import_history
from history.models import Message, Session

pytestmark = pytest.mark.django_db


def _png() -> bytes:
    buffer = io.BytesIO()
    PILImage.new("RGB", (40, 30), "orange").save(buffer, "PNG")
    return buffer.getvalue()


def _write(folder: Path, lines: list[object]) -> Path:
    path = folder / "history.jsonl"
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    return path


SAMPLE = [
    {
        "id": "1700000000000-aaaaaaaa",
        "session_id": "sess_1700000000000_abcdef",
        "timestamp": "2023-11-14T22:13:20Z",
        "role": "user",
        "content": "How does the lexer work?",
        "files": ["src/lexer.py"],
        "image_refs": ["shot.png"],
    },
    '{"id": "1700000000001-bbbbbbbb", "session_id": "sess_1700',  # cut off mid-write
    {
        "id": "1700000000002-cccccccc",
        "session_id": "sess_1700000000000_abcdef",
        "timestamp": "2023-11-14T22:13:25Z",
        "role": "assistant",
        "content": "It scans tokens.",
        "files_modified": ["src/lexer.py"],
    },
    "not json at all",
    ["a", "list"],
    {"session_id": "sess_1700000000000_abcdef", "role": "robot", "content": "bad role"},
    {
        "session_id": "sess_1700000009999_123456",
        "timestamp": "2023-11-15T10:00:00Z",
        "role": "user",
        "content": "A line without an id",
    },
]


def test_it_imports_sessions_messages_and_images_and_counts_the_lines_it_skips(tmp_path):
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "shot.png").write_bytes(_png())
    report = import_history(_write(tmp_path, SAMPLE), repository="/repo", decodes=DecodeGate())
    assert report.imported == 3
    assert report.sessions_created == 2
    assert report.skipped_lines == [2, 4, 5, 6]
    session = Session.objects.get(pk="sess_1700000000000_abcdef")
    assert (session.repository, session.title) == ("/repo", "How does the lexer work?")
    first, second = session.messages.order_by("seq")
    assert (first.role, first.files, first.timestamp.year) == ("user", ["src/lexer.py"], 2023)
    assert second.files_modified == ["src/lexer.py"]
    assert first.image_links.get().image.width == 40
    assert report.summary().splitlines()[1:] == [
        "  2 not JSON (lines 2, 4)",
        "  1 not a JSON object (line 5)",
        '  1 with a role other than "user" or "assistant" (line 6)',
        "  fix them and import again: lines already stored are not added twice",
    ]


def test_importing_twice_adds_nothing(tmp_path):
    path = _write(tmp_path, SAMPLE)
    import_history(path, repository="/repo", decodes=DecodeGate())
    again = import_history(path, repository="/repo", decodes=DecodeGate())
    assert (again.imported, again.already_present) == (0, 3)
    assert Message.objects.count() == 3


def test_new_messages_of_an_existing_session_continue_its_order(tmp_path):
    import_history(_write(tmp_path, SAMPLE[:1]), repository="/repo", decodes=DecodeGate())
    import_history(_write(tmp_path, SAMPLE), repository="/repo", decodes=DecodeGate())
    seqs = list(
        Message.objects.filter(session_id="sess_1700000000000_abcdef")
        .order_by("seq")
        .values_list("seq", "role")
    )
    assert seqs == [(0, "user"), (1, "assistant")]


def test_a_missing_image_is_reported_not_fatal(tmp_path):
    report = import_history(_write(tmp_path, SAMPLE[:1]), repository="/repo", decodes=DecodeGate())
    assert report.imported == 1
    assert report.missing_images == ["shot.png"]


def test_progress_is_reported_to_the_end(tmp_path):
    seen = []
    import_history(
        _write(tmp_path, SAMPLE),
        repository="/repo",
        decodes=DecodeGate(),
        progress=lambda done, total: seen.append((done, total)),
    )
    assert seen[-1][0] == seen[-1][1] > 0


def test_an_exported_sessions_mentions_come_back_and_malformed_ones_are_left_out(tmp_path):
    from history.interchange.export import session_to_jsonl

    kept = [
        {"kind": "file", "path": "docs/a: café.md", "symbol": "", "line": 0},
        {"kind": "symbol", "path": "src/utils.py", "symbol": "slugify", "line": 1},
        {"kind": "body", "path": "src/utils.py", "symbol": "slugify", "line": 1},
    ]
    bad = [{"path": 7}, {"path": "x.py", "line": -1}, {"path": "y.py", "line": True}, "z.py"]
    record = {
        "id": "1700000000000-mmmmmmmm",
        "session_id": "sess_1700000000000_mmmmmm",
        "timestamp": "2023-11-14T22:13:20Z",
        "role": "user",
        "content": "See these",
        "mentions": [kept[0], *bad, {**kept[1], "kind": "bogus"}, kept[2]],
    }
    import_history(_write(tmp_path, [record]), repository="/repo", decodes=DecodeGate())
    message = Message.objects.get(pk=record["id"])
    assert message.mentions == kept
    again = json.loads(session_to_jsonl(message.session, [message]))
    assert again["mentions"] == kept
