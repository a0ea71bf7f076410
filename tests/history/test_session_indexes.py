"""Migration 0021 drops the per-column session indexes (the composite ones cover them);
going back builds them again through the schema editor's public add_index."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from django.db import connection, transaction

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
    """The index's entries: SQLite's b-tree cells, PostgreSQL's index tuples (as counted
    by its statistics, which an ANALYZE brings up to date)."""
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("ANALYZE history_message")
            cursor.execute("SELECT reltuples::int FROM pg_class WHERE relname = %s", [index])
        else:
            cursor.execute("SELECT coalesce(sum(ncell), 0) FROM dbstat WHERE name = %s", [index])
        return cursor.fetchone()[0]


def _plan(sql: str, params) -> str:
    prefix = "EXPLAIN QUERY PLAN" if connection.vendor == "sqlite" else "EXPLAIN"
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL enable_seqscan = off")  # a small table: show the index
        cursor.execute(f"{prefix} {sql}", params)
        return " ".join(str(row[-1]) for row in cursor.fetchall())


def test_only_a_version_takes_an_entry_in_the_index_its_lookups_use():
    # Issue 42 item 13: every stored message wrote a page of an index of empty alt_of.
    session = services.session_create(repository="/repo")
    first = services.message_append(session=session, role="user", content="one")
    services.message_append(session=session, role="assistant", content="two")
    again = services.message_append(session=session, role="user", content="1", alt_of=first.id)
    assert _entries("version_of") == 1
    found = Message.objects.filter(Message.versions_of(first.id))
    assert list(found) == [again]
    plan = _plan(*found.query.sql_with_params())
    assert "version_of" in plan and "USING INDEX history_message" not in plan, plan
