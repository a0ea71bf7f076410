"""Versions without a turn: what a refused new version leaves, and the compaction guard."""

from __future__ import annotations

import pytest
from django.conf import settings

from chat.live.served import served
from chat.turn.branches.versions import BranchRefused, answered_or_restored, branch_out
from history import services
from history.models import Compaction

pytestmark = pytest.mark.django_db(transaction=True)


def conversation():
    session = services.session_create(repository=str(settings.ACDC_REPO), model="acdc/fake")
    rows = [
        services.message_append(session=session, role=role, content=text, turn_id=turn)
        for role, text, turn in [
            ("user", "Explain the parser", "t-1"),
            ("assistant", "Parser answer.", "t-1"),
            ("user", "Now the lexer", "t-2"),
            ("assistant", "Lexer answer.", "t-2"),
        ]
    ]
    return session, rows


def in_view(session) -> list[str]:
    return [m.content for m in session.messages.filter(rolled_back=False).order_by("seq")]


def test_a_new_version_whose_turn_stored_nothing_gives_the_old_one_back():
    session, rows = conversation()
    branched = branch_out(session.id, rows[3].id, served())  # Regenerate the lexer answer
    assert branched.question == "Now the lexer" and branched.root == rows[2].id
    assert in_view(session) == ["Explain the parser", "Parser answer."]

    assert answered_or_restored(session.id, branched.root, "t-never-stored", served()) is False
    assert in_view(session) == [m.content for m in rows]


def test_a_version_across_a_live_compaction_is_refused_and_nothing_is_set_aside():
    session, rows = conversation()
    Compaction.objects.create(session=session, case="summarize", replaced_ids=[rows[2].id])
    with pytest.raises(BranchRefused, match="undo the compaction"):
        branch_out(session.id, rows[2].id, served())
    assert in_view(session) == [m.content for m in rows]
