"""import-history stores every line it can and skips, counts and names the others.

Each bad line sits between good ones in the same batch, written as the bytes a broken or
hostile history.jsonl holds. Run on SQLite and on PostgreSQL (DATABASE_URL): both must
store the good lines and nothing of the bad ones.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.db import connection

from history.images import DecodeGate
from history.interchange.importer import import_history
from history.interchange.lines import MAX_LINE_BYTES
from history.models import Message, Session

pytestmark = pytest.mark.django_db

SESSION = "sess_bad_lines"


def _good(n: int) -> bytes:
    record = {
        "id": f"good-{n}",
        "session_id": SESSION,
        "timestamp": f"2024-05-0{1 + n % 9}T10:00:00Z",
        "role": "user" if n % 2 else "assistant",
        "content": f"good line {n}",
    }
    return json.dumps(record).encode()


def _bad(**raw: str) -> bytes:
    """A line of a user message with `raw` (JSON text, written as is) over its fields."""
    fields = {"id": '"bad"', "session_id": f'"{SESSION}"', "role": '"user"', "content": '"x"'}
    text = ", ".join(f'"{name}": {value}' for name, value in (fields | raw).items())
    return ("{" + text + "}").encode()


BAD_LINES: dict[str, bytes] = {
    "with text that is not valid Unicode (a lone surrogate)": _bad(content='"half \\ud800"'),
    "surrogate in session_id": _bad(session_id='"sess_\\udfff"'),
    "with NaN or Infinity, which JSON does not allow": _bad(edit_results='[{"ok": NaN}]'),
    "with a NUL character": _bad(content='"before\\u0000after"'),
    "nested too deeply": _bad(edit_results="[" * 100_000 + "]" * 100_000),
    "nested within Python's limit but past MAX_DEPTH": _bad(edit_results="[" * 90 + "]" * 90),
    "whose content is not text": _bad(content="42"),
    "whose session_id is not text of 1 to 40 characters": _bad(session_id="7"),
    "not a JSON object": b'["a", "list"]',
    "not valid UTF-8": b'{"id": "bad", "session_id": "s", "role": "user", "content": "\xff\xfe"}',
    "a number no database stores": _bad(edit_results="[1e999]"),
}


def _write(folder: Path, lines: list[bytes]) -> Path:
    path = folder / "history.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _stored() -> list[str]:
    return list(
        Message.objects.filter(session_id=SESSION).order_by("seq").values_list("id", flat=True)
    )


@pytest.mark.parametrize("bad", BAD_LINES.values(), ids=BAD_LINES.keys())
def test_a_bad_line_is_skipped_and_counted_and_the_good_lines_around_it_are_stored(tmp_path, bad):
    path = _write(tmp_path, [_good(1), _good(2), bad, _good(3)])
    report = import_history(path, repository="/repo", decodes=DecodeGate())
    assert report.skipped_lines == [3]
    assert report.imported == 3
    assert _stored() == ["good-1", "good-2", "good-3"]


def test_every_bad_line_in_one_file_is_named_under_its_reason(tmp_path):
    lines = [_good(0)]
    for bad in BAD_LINES.values():
        lines += [bad, _good(len(lines))]
    report = import_history(_write(tmp_path, lines), repository="/repo", decodes=DecodeGate())
    assert report.imported == len(BAD_LINES) + 1
    assert report.skipped_lines == list(range(2, 2 * len(BAD_LINES) + 1, 2))
    summary = report.summary()
    assert f"skipped {len(BAD_LINES)} lines that could not be stored:" in summary
    assert "  2 with text that is not valid Unicode (a lone surrogate) (lines 2, 4)" in summary
    assert "  1 not valid UTF-8 (line 20)" in summary
    assert "  2 nested too deeply (lines 10, 12)" in summary


def test_a_line_over_the_size_limit_is_read_past_and_skipped(tmp_path):
    enormous = _bad(content=json.dumps("x" * (MAX_LINE_BYTES + 10)))
    report = import_history(
        _write(tmp_path, [_good(1), enormous, _good(3)]), repository="/repo", decodes=DecodeGate()
    )
    assert report.skipped == {"longer than 32 MiB": [2]}
    assert _stored() == ["good-1", "good-3"]


def test_a_year_one_timestamp_with_an_offset_is_stored_undated(tmp_path):
    """Year 1 at +05:00 falls before the first instant UTC can hold: the line is kept, as
    a line with an unreadable timestamp is, and the session keeps its other times."""
    early = json.dumps(
        {
            "id": "early",
            "session_id": SESSION,
            "timestamp": "0001-01-01T00:00:00+05:00",
            "role": "user",
            "content": "from the dawn of time",
        }
    ).encode()
    report = import_history(
        _write(tmp_path, [_good(1), early, _good(3)]), repository="/repo", decodes=DecodeGate()
    )
    assert (report.imported, report.skipped) == (3, {})
    assert _stored() == ["good-1", "early", "good-3"]
    assert Message.objects.get(pk="early").timestamp.year == 1970
    assert Session.objects.get(pk=SESSION).created_at.year == 2024


@pytest.fixture
def refusing_database():
    """A database that refuses one row the checks pass, as a constraint or trigger of its
    own would: what the line-by-line fallback is for."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(
                "CREATE TRIGGER refuse_one BEFORE INSERT ON history_message "
                "WHEN NEW.content = 'refuse me' BEGIN SELECT RAISE(ABORT, 'refused'); END"
            )
        else:
            cursor.execute(
                "CREATE FUNCTION refuse_one() RETURNS trigger AS $$ BEGIN "
                "IF NEW.content = 'refuse me' THEN RAISE EXCEPTION 'refused'; END IF; "
                "RETURN NEW; END $$ LANGUAGE plpgsql"
            )
            cursor.execute(
                "CREATE TRIGGER refuse_one BEFORE INSERT ON history_message "
                "FOR EACH ROW EXECUTE FUNCTION refuse_one()"
            )
    yield


def test_a_batch_the_database_refuses_is_stored_line_by_line(tmp_path, refusing_database):
    refused = json.dumps(
        {"id": "refused", "session_id": "sess_refused", "role": "user", "content": "refuse me"}
    ).encode()
    path = _write(tmp_path, [_good(1), _good(2), refused, _good(3)])
    report = import_history(path, repository="/repo", decodes=DecodeGate())
    assert report.skipped == {"refused by the database (refused)": [3]}
    assert (report.imported, report.sessions_created) == (3, 1)
    assert _stored() == ["good-1", "good-2", "good-3"]
    assert not Session.objects.filter(pk="sess_refused").exists()
