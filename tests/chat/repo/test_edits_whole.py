"""A reply's edits apply together or not at all: Accept all, Auto-apply and --apply write
nothing while one of its edits cannot apply, and Auto-apply never takes a protected file."""

from __future__ import annotations

import pytest
from django.test import Client

from chat.repo.edits.applying import reapply
from chat.repo.edits.proposing import propose
from chat.repo.edits.replies import after_reply
from chat.repo.edits.undo import undo
from chat.web.edits.cards import render_edits
from contextcore.edits import EditOp
from history import services
from history.models import Message, PendingEdit, Session
from tests import serving

pytestmark = pytest.mark.django_db
A, B = "A = 1\n", "def b():\n    return 'b'\n"
BLOCKS = """Two changes.

a.py
```
<<<<<<< SEARCH
A = 1
=======
A = 2
>>>>>>> REPLACE
```

b.py
```
<<<<<<< SEARCH
    return 'nope'
=======
    return 'c'
>>>>>>> REPLACE
```
"""


@pytest.fixture
def repo_files():
    return {"a.py": A, "b.py": B, "AGENTS.md": "Be brief.\n"}


@pytest.fixture
def edits_on(settings, served_root):
    settings.ACDC_EDITS = True
    return served_root


def reply(session: Session, text: str, turn: str = "t1") -> Message:
    services.message_append(session=session, role="user", content="change", turn_id=turn)
    return services.message_append(session=session, role="assistant", content=text, turn_id=turn)


def statuses(message: Message) -> dict[str, str]:
    return dict(message.edits.order_by("id").values_list("path", "status"))


def test_accept_all_writes_nothing_while_one_edit_of_the_reply_fails(edits_on):
    session = services.session_create(repository="", model="acdc/fake")
    message = reply(session, BLOCKS)
    after_reply(session, message, repo=serving.repository())
    response = Client().post(f"/m/{message.id}/edits/", {"op": "accept"})
    assert response.status_code == 204
    assert (edits_on / "a.py").read_text() == A and (edits_on / "b.py").read_text() == B
    assert statuses(message) == {"a.py": "pending", "b.py": "failed"}


def test_auto_apply_writes_nothing_of_a_reply_with_a_failing_edit(edits_on):
    session = services.session_create(repository="", model="acdc/fake")
    session.auto_apply = True
    session.save(update_fields=["auto_apply"])
    message = reply(session, BLOCKS)
    outcome = after_reply(session, message, repo=serving.repository())
    assert "Nothing was written" in outcome.notice and "b.py" in outcome.notice
    assert (edits_on / "a.py").read_text() == A
    assert statuses(message) == {"a.py": "pending", "b.py": "failed"}


def test_the_person_can_still_take_one_file_of_such_a_reply(edits_on):
    session = services.session_create(repository="", model="acdc/fake")
    message = reply(session, BLOCKS)
    after_reply(session, message, repo=serving.repository())
    Client().post(f"/m/{message.id}/edits/", {"op": "accept", "path": "a.py"})
    assert (edits_on / "a.py").read_text() == "A = 2\n"
    assert statuses(message) == {"a.py": "applied", "b.py": "failed"}


def test_apply_now_takes_a_whole_reply_at_its_end_not_edit_by_edit(edits_on):
    session = services.session_create(repository="", model="acdc/fake")
    repo = serving.repository()
    ops = [EditOp("a.py", "replace", "A = 1", "A = 2")]
    said = propose(session, ops, repo=repo, turn_id="t1", auto=True)
    assert "written when your reply ends" in said.text()
    assert (edits_on / "a.py").read_text() == A  # not while the reply streams
    message = reply(session, "Done.")
    after_reply(session, message, repo=repo, apply_now=True)
    assert (edits_on / "a.py").read_text() == "A = 2\n"
    assert statuses(message) == {"a.py": "applied"}


def test_auto_apply_never_takes_a_protected_file_and_says_why(edits_on):
    session = services.session_create(repository="", model="acdc/fake")
    session.auto_apply = True
    session.save(update_fields=["auto_apply"])
    repo = serving.repository()
    ops = [
        EditOp("a.py", "replace", "A = 1", "A = 2"),
        EditOp("AGENTS.md", "create", new_text="Obey the model.\n", overwrite=True),
    ]
    propose(session, ops, repo=repo, turn_id="t1", auto=True)
    message = reply(session, "Done.")
    outcome = after_reply(session, message, repo=repo)
    assert "Auto-apply waited" in outcome.notice and "AGENTS.md" in outcome.notice
    assert "project instructions" in outcome.notice
    assert (edits_on / "AGENTS.md").read_text() == "Be brief.\n"
    assert (edits_on / "a.py").read_text() == A  # the reply waits whole
    row = message.edits.get(path="AGENTS.md")
    assert row.status == "pending" and "project instructions" in row.protected
    assert 'role="alert">Auto-apply waited' in render_edits(
        message, serving.repository()
    )  # every tab says why
    Client().post(f"/m/{message.id}/edits/", {"op": "accept"})  # the person's own Accept
    assert (edits_on / "AGENTS.md").read_text() == "Obey the model.\n"


def test_an_undone_edit_can_be_applied_again(edits_on):
    session = services.session_create(repository="", model="acdc/fake")
    repo = serving.repository()
    propose(session, [EditOp("a.py", "replace", "A = 1", "A = 2")], repo=repo, turn_id="t1")
    message = reply(session, "Done.")
    after_reply(session, message, repo=repo)
    Client().post(f"/m/{message.id}/edits/", {"op": "accept"})
    assert undo(session, message, repo=repo).applied
    assert (edits_on / "a.py").read_text() == A
    again = reapply(session, message, repo=repo)
    assert again.applied, again.text()
    assert (edits_on / "a.py").read_text() == "A = 2\n"
    assert statuses(message) == {"a.py": "applied"}
    assert undo(session, message, repo=repo).applied  # and undone again
    assert (edits_on / "a.py").read_text() == A


def test_a_failure_the_model_was_told_of_gives_way_to_its_next_edit_of_the_file(edits_on):
    session = services.session_create(repository="", model="acdc/fake")
    repo = serving.repository()
    wrong = EditOp("b.py", "replace", "return 'nope'", "return 'c'")
    right = EditOp("b.py", "replace", "return 'b'", "return 'c'")
    propose(session, [wrong], repo=repo, turn_id="t1", call_id="c1")
    propose(session, [right], repo=repo, turn_id="t1", call_id="c2")  # same response: not told
    assert list(PendingEdit.objects.values_list("status", flat=True)) == ["failed", "pending"]
    from history.edits import edits_told

    edits_told("t1")  # the next tool round: the model has read the failure
    propose(session, [EditOp("a.py", "replace", "A = 1", "A = 2")], repo=repo, turn_id="t1")
    assert PendingEdit.objects.get(call_id="c1").status == "failed"  # another file: stands
    propose(session, [right], repo=repo, turn_id="t1", call_id="c3")
    assert PendingEdit.objects.get(call_id="c1").status == "retried"


def test_the_second_edit_of_a_file_in_a_reply_meets_the_text_the_first_would_leave(edits_on):
    session = services.session_create(repository="", model="acdc/fake")
    repo = serving.repository()
    propose(session, [EditOp("a.py", "replace", "A = 1", "A = 2")], repo=repo, turn_id="t1")
    said = propose(session, [EditOp("a.py", "replace", "A = 2", "A = 3")], repo=repo, turn_id="t1")
    assert not said.report, said.report
    message = reply(session, "Done.")
    after_reply(session, message, repo=repo)
    Client().post(f"/m/{message.id}/edits/", {"op": "accept"})
    assert (edits_on / "a.py").read_text() == "A = 3\n"


def test_after_too_many_failures_the_turn_takes_no_more_edits(edits_on, settings):
    settings.ACDC_MAX_FAILED_EDITS = 3
    session = services.session_create(repository="", model="acdc/fake")
    repo = serving.repository()
    for n in range(3):
        propose(session, [EditOp("b.py", "replace", f"guess {n}", "x")], repo=repo, turn_id="t1")
    said = propose(session, [EditOp("b.py", "replace", "guess 4", "x")], repo=repo, turn_id="t1")
    assert "Edits are stopped for this turn: 3 edits failed" in said.text()
    assert PendingEdit.objects.count() == 3
    other = propose(session, [EditOp("b.py", "replace", "guess", "x")], repo=repo, turn_id="t2")
    assert "stopped" not in other.text()  # a new turn edits again


def test_refused_content_is_never_stored(edits_on):
    session = services.session_create(repository="", model="acdc/fake")
    huge = "x = 1\n" * 400_000  # 2.4 MB: over the size limit
    said = propose(session, [EditOp("big.py", "create", new_text=huge)], repo=serving.repository())
    assert "refused" in said.report
    row = PendingEdit.objects.get()
    assert (row.status, row.path, row.new_text, row.old_text) == ("failed", "big.py", "", "")
