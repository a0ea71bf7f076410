"""Grounding: earlier summaries and pinned notes of the repository, ranked by relevance."""

from __future__ import annotations

import pytest

from history import services
from history.grounding import format_related, query_terms, related_context
from history.models import Message

pytestmark = pytest.mark.django_db


def _note(session, text, **fields):
    message = services.message_append(session=session, role="system", content=text, **fields)
    return message


@pytest.fixture
def sessions():
    here = services.session_create(repository="/repo")
    other = services.session_create(repository="/repo")
    elsewhere = services.session_create(repository="/elsewhere")
    return here, other, elsewhere


def test_summaries_and_pinned_notes_of_the_repository_are_found_best_first(sessions):
    here, other, elsewhere = sessions
    summary = _note(
        other,
        "History compacted (summarized): 8 messages replaced, 9,000 → 900 tokens.\n\n"
        "We rewrote the tokenizer cache and agreed to keep the lexer untouched.",
        system_event=True,
    )
    pinned = services.message_append(
        session=here, role="user", content="Always run the lexer tests before committing."
    )
    Message.objects.filter(pk=pinned.pk).update(pinned=True)
    services.message_append(session=here, role="user", content="the lexer is slow")  # not pinned
    _note(elsewhere, "History compacted: the lexer of another repository.", system_event=True)

    items = related_context(repository="/repo", text="How fast is the lexer tokenizer cache?")

    assert [i.message_id for i in items] == [summary.id, pinned.id]
    assert items[0].kind == "summary" and items[1].kind == "pinned"
    assert 0 < items[1].relevance < items[0].relevance <= 1
    assert "Earlier summary" in format_related(items) and "Pinned note" in format_related(items)


def test_rolled_back_and_unrelated_notes_are_left_out(sessions):
    here, _, _ = sessions
    note = _note(here, "History compacted: the parser work.", system_event=True)
    assert related_context(repository="/repo", text="parser") != []
    Message.objects.filter(pk=note.pk).update(rolled_back=True)
    assert related_context(repository="/repo", text="parser") == []
    assert related_context(repository="/repo", text="gardening") == []


@pytest.mark.parametrize("text", ["", "   ", "the and of", "!!! ??? ..."])
def test_a_message_without_words_finds_nothing(sessions, text):
    assert query_terms(text) == [] or related_context(repository="/repo", text=text) == []
    assert related_context(repository="/repo", text=text) == []
