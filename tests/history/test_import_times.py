"""Imported sessions keep their own times, so an old history never takes over History or `/`."""

from __future__ import annotations

import importlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.apps import apps as django_apps
from django.conf import settings

from history import selectors, services
from history.images import DecodeGate
from history.interchange.importer import import_history
from history.models import Session

pytestmark = pytest.mark.django_db
MIGRATION = importlib.import_module("history.migrations.0012_imported_session_times")

DAYS_AGO = datetime.now(UTC).replace(microsecond=0) - timedelta(days=5)


def _line(session_id: str, minutes: int, role: str, content: str) -> dict:
    stamp = DAYS_AGO + timedelta(minutes=minutes)
    return {
        "id": f"{session_id}-{minutes}",
        "session_id": session_id,
        "timestamp": stamp.isoformat().replace("+00:00", "Z"),
        "role": role,
        "content": content,
    }


OLD_HISTORY = [
    _line("sess_old_a", 0, "user", "The oldest question"),
    _line("sess_old_a", 3, "assistant", "The oldest answer"),
    _line("sess_old_b", 60, "user", "A later question"),
    _line("sess_old_b", 90, "assistant", "A later answer"),
]


def _import(folder: Path, lines: list[dict]) -> None:
    path = folder / "history.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    import_history(path, repository=str(settings.ACDC_REPO), decodes=DecodeGate())


def _used_session() -> Session:
    session = services.session_create(repository=str(settings.ACDC_REPO))
    services.message_append(session=session, role="user", content="Today's question")
    return session


def test_an_imported_session_spans_its_messages_times(tmp_path):
    _import(tmp_path, OLD_HISTORY)
    old_a = Session.objects.get(pk="sess_old_a")
    assert old_a.created_at == DAYS_AGO
    assert old_a.updated_at == DAYS_AGO + timedelta(minutes=3)
    assert Session.objects.get(pk="sess_old_b").updated_at == DAYS_AGO + timedelta(minutes=90)


def test_a_session_split_over_batches_spans_all_of_them(tmp_path, monkeypatch):
    monkeypatch.setattr("history.interchange.importer.BATCH", 1)
    _import(tmp_path, OLD_HISTORY)
    old_b = Session.objects.get(pk="sess_old_b")
    assert old_b.created_at == DAYS_AGO + timedelta(minutes=60)
    assert old_b.updated_at == DAYS_AGO + timedelta(minutes=90)


def test_new_messages_move_an_imported_session_later_never_earlier(tmp_path):
    _import(tmp_path, OLD_HISTORY[:2])
    _import(tmp_path, [*OLD_HISTORY[:2], _line("sess_old_a", 600, "user", "Back again")])
    old_a = Session.objects.get(pk="sess_old_a")
    assert old_a.created_at == DAYS_AGO
    assert old_a.updated_at == DAYS_AGO + timedelta(minutes=600)


def test_a_line_without_a_timestamp_leaves_the_session_at_the_import_time(tmp_path):
    before = datetime.now(UTC)
    _import(tmp_path, [{"session_id": "sess_undated", "role": "user", "content": "When?"}])
    assert Session.objects.get(pk="sess_undated").updated_at >= before


def test_history_lists_the_session_used_most_recently_first(client, tmp_path):
    used = _used_session()
    _import(tmp_path, OLD_HISTORY)
    listed = [s.session_id for s in selectors.list_sessions(repository=str(settings.ACDC_REPO))]
    assert listed == [used.id, "sess_old_b", "sess_old_a"]
    html = client.get("/history/").content.decode()
    assert html.index("Today&#x27;s question") < html.index("A later question")
    assert html.index("A later question") < html.index("The oldest question")


def test_the_front_page_restores_the_newest_used_session_not_an_import(client, tmp_path):
    used = _used_session()
    _import(tmp_path, OLD_HISTORY)
    assert client.get("/")["Location"] == f"/s/{used.id}/"


def test_the_migration_dates_sessions_imported_before_and_leaves_used_ones(tmp_path):
    used = _used_session()
    _import(tmp_path, OLD_HISTORY)
    now = datetime.now(UTC)
    Session.objects.filter(pk__startswith="sess_old").update(created_at=now, updated_at=now)
    used_times = Session.objects.filter(pk=used.id).values_list("created_at", "updated_at").get()

    MIGRATION._date_imported_sessions(django_apps, None)

    old_b = Session.objects.get(pk="sess_old_b")
    assert (old_b.created_at, old_b.updated_at) == (
        DAYS_AGO + timedelta(minutes=60),
        DAYS_AGO + timedelta(minutes=90),
    )
    assert Session.objects.filter(pk=used.id).values_list("created_at", "updated_at").get() == (
        used_times
    )
