"""A box's choice in the Files panel is resolved, saved and drawn on the server from one
reading of the session: the folder's files it takes, the locked ones it skips with a note,
the outlines it sets, and the answer every tab swaps in."""

from __future__ import annotations

import re

import pytest
from django.apps import apps
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from chat.repo import sessionsets
from chat.session.setchanges import Choice
from chat.web.panels import selection
from chat.web.panels.fileupdates import row_key
from history import services
from history.models import Session
from tests import serving
from tests.chat.web.pickerhtml import answer_states

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("served_root")]


@pytest.fixture
def repo_files():
    return {
        "lib/a.py": "def a():\n    return 1\n",
        "lib/deep/b.py": "def b():\n    return 2\n",
        "lib/notes.md": "# notes\n",
        "lib/.env": "API_KEY=sk-abcdefabcdefabcdefabcdef\n",
        "README.md": "# Readme\n",
    }


def answer_choice(session_id: str, choice: Choice) -> selection.Answer:
    """A select frame answered with the Files panel parts the test's served object holds."""
    served = apps.get_app_config("chat").served
    return selection.answer_choice(served.files, session_id, choice, served)


def new_session() -> Session:
    return services.session_create(repository=str(settings.ACDC_REPO), model="acdc/fake")


def _held(session_id: str) -> tuple[list[str], list[str]]:
    active, outlines, _ = sessionsets.file_choice(
        Session.objects.get(pk=session_id), repo=serving.repository()
    )
    return sorted(active), sorted(outlines)


def _session_reads(queries) -> list[str]:
    table = Session._meta.db_table
    return [
        q["sql"]
        for q in queries
        if q["sql"].lstrip().upper().startswith("SELECT")
        and re.search(rf'FROM "{table}"', q["sql"])
    ]


def test_a_select_frame_reads_its_session_once():
    session = new_session()
    with CaptureQueriesContext(connection) as queries:
        answer_choice(session.id, Choice("file", ("README.md",), on=True))
    assert len(_session_reads(queries.captured_queries)) == 1, _session_reads(queries)
    assert _held(session.id) == (["README.md"], [])


def test_a_folder_takes_its_files_and_skips_a_locked_one_with_a_note():
    session = new_session()
    answer = answer_choice(session.id, Choice("folder", ("lib",), on=True))
    assert _held(session.id) == (["lib/a.py", "lib/deep/b.py", "lib/notes.md"], [])
    (note,) = answer.to_tab
    assert "1 locked file was skipped (shaped like a secret)" in note
    states = answer_states(answer.to_session[0])
    assert states[row_key("lib")] == "all" and states[row_key("lib/deep/b.py")] == "on"

    answer_choice(session.id, Choice("file", ("lib/.env",), on=True, confirm=("lib/.env",)))
    assert "lib/.env" in _held(session.id)[0]
    answer = answer_choice(session.id, Choice("folder", ("lib",), on=False))
    assert _held(session.id) == ([], [])
    assert 'id="picker-note" role="status" hidden' in answer.to_tab[0]


def test_an_outline_choice_sets_the_outlinable_files_and_takes_them_out_again():
    session = new_session()
    answer_choice(session.id, Choice("file", ("lib/notes.md",), on=True))
    answer_choice(session.id, Choice("outline-folder", ("lib",), on=True))
    outlined = ["lib/a.py", "lib/deep/b.py"]
    assert _held(session.id) == (sorted([*outlined, "lib/notes.md"]), outlined)
    answer_choice(session.id, Choice("file", ("lib/a.py",), on=True))  # whole again
    assert _held(session.id)[1] == ["lib/deep/b.py"]
    answer = answer_choice(session.id, Choice("outline", ("lib/deep/b.py",), on=False))
    assert _held(session.id) == (["lib/a.py", "lib/notes.md"], [])
    assert answer_states(answer.to_session[0])[row_key("lib/deep/b.py")] == "off"


def test_a_locked_file_is_not_added_without_its_confirmation():
    session = new_session()
    answer = answer_choice(session.id, Choice("file", ("lib/.env",), on=True))
    assert _held(session.id) == ([], [])
    assert any("lib/.env" in html for html in answer.to_tab), answer.to_tab
