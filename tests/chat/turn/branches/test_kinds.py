"""Every kind of turn opens through one entry point: what it sends, what the tabs redraw
first, and a refusal of any kind as the one `TurnRejected` the host answers with."""

from __future__ import annotations

import pytest
from django.conf import settings

from chat.live.served import served
from chat.turn.branches.kinds import Opening, TurnKind, open_kind
from chat.turn.turns import TurnRejected
from history import services
from history.models import Message

pytestmark = pytest.mark.django_db(transaction=True)


def exchange():
    session = services.session_create(repository=str(settings.ACDC_REPO), model="acdc/fake")
    question = services.message_append(session=session, role="user", content="Explain the parser")
    reply = services.message_append(session=session, role="assistant", content="It parses.")
    return session, question, reply


def test_a_plain_message_is_sent_as_typed():
    session, _, _ = exchange()
    opened = open_kind(session.id, TurnKind(), "And the lexer?", ("a" * 64,), served())
    assert opened == Opening("And the lexer?", ("a" * 64,))


def test_regenerate_asks_the_stored_question_again_as_a_new_version_of_the_reply():
    session, question, reply = exchange()
    opened = open_kind(session.id, TurnKind(branch=reply.id), "", (), served())
    assert (opened.user_text, opened.redraw) == ("Explain the parser", "conversation")
    assert opened.alt_of == question.id  # the switcher sits under this exchange


def test_retry_sets_the_failed_exchange_aside_and_asks_its_question_again():
    session, question, reply = exchange()
    Message.objects.filter(pk__in=[question.pk, reply.pk]).update(turn_id="turn_1")
    Message.objects.filter(pk=reply.pk).update(status=Message.Status.ERROR)
    opened = open_kind(session.id, TurnKind(retry="turn_1"), "", (), served())
    assert opened == Opening("Explain the parser", (), redraw="retry")
    assert Message.objects.get(pk=reply.pk).rolled_back


@pytest.mark.parametrize("kind", ["branch", "retry", "replaces"])
def test_a_refusal_of_any_kind_is_one_rejection_with_its_reason(kind):
    session, _, _ = exchange()
    with pytest.raises(TurnRejected) as refused:
        open_kind(session.id, TurnKind(**{kind: "msg_nowhere"}), "again", (), served())
    assert str(refused.value)
