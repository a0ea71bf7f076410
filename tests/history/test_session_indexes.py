"""Migration 0021 drops the per-column session indexes (the composite ones cover them);
going back builds them again through the schema editor's public add_index."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from django.db import connection

from history import services
from history.models import Message

pytestmark = pytest.mark.django_db(transaction=True)

MIGRATION = importlib.import_module("history.migrations.0021_smaller_indexes")


def _indexed(editor) -> dict[str, list[str]]:
    found = {}
    for model_name, field_name in MIGRATION.SESSION_COLUMNS:
        model = apps.get_model("history", model_name)
        column = model._meta.get_field(field_name).column
        found[model_name] = MIGRATION._column_indexes(editor, model._meta.db_table, column)
    return found


def test_going_back_builds_each_session_index_again_and_forward_drops_it():
    with connection.schema_editor() as editor:
        assert all(not names for names in _indexed(editor).values())
        MIGRATION._create_session_indexes(apps, editor)
    with connection.schema_editor() as editor:
        back = _indexed(editor)
        assert all(len(names) == 1 for names in back.values()), back
        MIGRATION._create_session_indexes(apps, editor)  # a second pass adds nothing
    with connection.schema_editor() as editor:
        assert _indexed(editor) == back
        MIGRATION._drop_session_indexes(apps, editor)
    with connection.schema_editor() as editor:
        assert all(not names for names in _indexed(editor).values())


def _entries(index: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(sum(ncell), 0) FROM dbstat WHERE name = %s", [index])
        return cursor.fetchone()[0]


@pytest.mark.skipif(connection.vendor != "sqlite", reason="dbstat and the plan are SQLite's")
def test_only_a_version_takes_an_entry_in_the_index_its_lookups_use():
    # Issue 42 item 13: every stored message wrote a page of an index of empty alt_of.
    session = services.session_create(repository="/repo")
    first = services.message_append(session=session, role="user", content="one")
    services.message_append(session=session, role="assistant", content="two")
    again = services.message_append(session=session, role="user", content="1", alt_of=first.id)
    assert _entries("version_of") == 1
    found = Message.objects.filter(Message.versions_of(first.id))
    assert list(found) == [again]
    with connection.cursor() as cursor:
        sql, params = found.query.sql_with_params()
        cursor.execute(f"EXPLAIN QUERY PLAN {sql}", params)
        plan = " ".join(str(row[-1]) for row in cursor.fetchall())
    assert "USING INDEX version_of" in plan, plan
