"""Pending edits as rows: created per op, claimed once, bound to their reply."""

from __future__ import annotations

import pytest

from contextcore.edits import EditOp
from history import edits, services
from history.models import Message, PendingEdit

pytestmark = pytest.mark.django_db


@pytest.fixture
def session():
    return services.session_create(repository="/repo", model="acdc/fake")


def ops() -> list[EditOp]:
    return [
        EditOp("a.py", "replace", "x = 1\n", "x = 2\n", base_sha256="f" * 64),
        EditOp("b.py", "create", new_text="y = 1\n", source="block"),
    ]


def test_it_stores_one_pending_row_per_op_that_reads_back_as_the_same_op(session):
    rows = edits.edits_create(session=session, ops=ops(), turn_id="t1", first_block=0)
    assert [row.status for row in rows] == ["pending", "pending"]
    assert [row.block_index for row in rows] == [0, 1]
    assert [edits.op_of(row) for row in rows] == ops()


def test_two_claims_of_the_same_rows_give_them_to_one_claimant(session):
    rows = edits.edits_create(session=session, ops=ops())
    ids = [row.pk for row in rows]
    first, mine = edits.edits_claim(ids)
    second, theirs = edits.edits_claim(ids)  # another tab, a moment later
    assert [row.pk for row in mine] == ids and theirs == []
    edits.edit_mark(mine[0], PendingEdit.Status.APPLIED, "applied: a.py, +1 −1")
    edits.edits_release(mine[1:])
    _, again = edits.edits_claim(ids)
    assert [row.pk for row in again] == [ids[1]]  # the applied one is not pending any more


def test_a_turns_rows_are_bound_to_its_answer_and_fill_its_edit_fields(session):
    rows = edits.edits_create(session=session, ops=ops(), turn_id="t1")
    message = services.message_append(
        session=session, role=Message.Role.ASSISTANT, content="done", turn_id="t1"
    )
    assert edits.edits_bind_message(session=session, turn_id="t1", message=message) == 2
    edits.edit_mark(rows[0], PendingEdit.Status.APPLIED, "applied: a.py v1→v2, +1 −1")
    edits.message_record_edits(message)
    message.refresh_from_db()
    assert message.files_modified == ["a.py"]
    assert [(r["path"], r["status"]) for r in message.edit_results] == [
        ("a.py", "applied"),
        ("b.py", "pending"),
    ]
