"""Migration 0021 drops the per-column session indexes (the composite ones cover them);
going back builds them again through the schema editor's public add_index."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from django.db import connection

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
