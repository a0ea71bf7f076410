"""Fork with compactions: a live compaction within the copied messages comes along with its
references renamed to the copies; one that reaches past the fork point refuses the fork."""

from __future__ import annotations

import pytest
from django.conf import settings

from chat.turn.branches.fork import fork
from chat.turn.branches.versions import BranchRefused
from history import services
from history.models import Compaction, Message, Session

pytestmark = pytest.mark.django_db(transaction=True)


def conversation():
    session = services.session_create(repository=str(settings.ACDC_REPO), model="acdc/fake")
    rows = [
        services.message_append(session=session, role=role, content=text)
        for role, text in [
            ("user", "Explain the parser"),
            ("assistant", "Parser answer."),
            ("user", "Now the lexer"),
            ("assistant", "Lexer answer."),
        ]
    ]
    return session, rows


def compaction(session, replaced):
    return Compaction.objects.create(
        session=session,
        case="summarize",
        summary="They talked about the parser.",
        replaced_ids=[m.id for m in replaced],
        history_after=[{"role": "user", "content": "summary"}, {"ref": replaced[-1].id}],
    )


def test_a_compaction_within_the_copy_comes_along_with_its_references_renamed():
    session, rows = conversation()
    compaction(session, rows[:2])
    child = fork(session.id, rows[3].id)
    [copied] = Compaction.objects.filter(session=child)
    copies = {m.content: m.id for m in Message.objects.filter(session=child)}
    assert copied.replaced_ids == [copies["Explain the parser"], copies["Parser answer."]]
    assert copied.history_after[1] == {"ref": copies["Parser answer."]}
    assert Compaction.objects.filter(session=session).count() == 1  # the parent keeps its own


def test_a_compaction_past_the_fork_point_refuses_the_fork_in_words():
    session, rows = conversation()
    compaction(session, rows)
    with pytest.raises(BranchRefused, match="undo the compaction"):
        fork(session.id, rows[1].id)
    assert Session.objects.count() == 1


def test_a_forked_message_keeps_its_mentions():
    session, rows = conversation()
    chip = {"kind": "file", "path": "src/parser.py", "symbol": "", "line": 0}
    Message.objects.filter(pk=rows[0].pk).update(mentions=[chip])
    child = fork(session.id, rows[1].id)
    copied = Message.objects.get(session=child, content="Explain the parser")
    assert copied.mentions == [chip]
