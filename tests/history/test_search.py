"""Search: ranked, snippets with marks, safe with any input, on SQLite and PostgreSQL alike."""

from __future__ import annotations

import pytest
from django.db import DatabaseError

from history import services
from history.models import Image, Message, MessageImage
from history.search import MAX_QUERY_CHARS, fts5_query, python_snippet, search_messages

pytestmark = pytest.mark.django_db
REPO = "/repo"


def text(hit) -> str:
    return "".join(p.text for p in hit.parts)


def marked(hit) -> list[str]:
    return [p.text for p in hit.parts if p.marked]


def _session(*contents: str, repository: str = REPO, roles=("user", "assistant")):
    session = services.session_create(repository=repository)
    for index, content in enumerate(contents):
        services.message_append(session=session, role=roles[index % 2], content=content)
    return session


def test_an_empty_query_finds_nothing():
    _session("anything at all")
    assert search_messages(repository=REPO, query="").hits == []
    assert search_messages(repository=REPO, query="   \n ").hits == []


def test_a_word_is_found_case_insensitively_with_the_match_marked():
    _session("The Parser reads tokens from the lexer.")
    result = search_messages(repository=REPO, query="parser")
    assert result.mode == "ranked"
    assert len(result.hits) == 1
    assert marked(result.hits[0]) == ["Parser"]


def test_the_message_that_mentions_a_word_more_ranks_first():
    _session("the cache is warm", "cache cache cache: the cache tiers and the cache breakpoints")
    hits = search_messages(repository=REPO, query="cache").hits
    assert [h.role for h in hits] == ["assistant", "user"]


def test_every_word_must_match():
    _session("alpha only here", "alpha and beta together")
    hits = search_messages(repository=REPO, query="alpha beta").hits
    assert [h.parts for h in hits] and len(hits) == 1
    assert "together" in text(hits[0])


def test_the_role_filter_keeps_only_that_role():
    _session("widget question", "widget answer")
    hits = search_messages(repository=REPO, query="widget", role="assistant").hits
    assert [h.role for h in hits] == ["assistant"]


def test_the_limit_caps_the_hits():
    _session(*[f"gizmo number {n}" for n in range(8)])
    assert len(search_messages(repository=REPO, query="gizmo", limit=3).hits) == 3


def test_other_repositories_are_not_searched():
    _session("mine: quasar", repository=REPO)
    _session("theirs: quasar", repository="/elsewhere")
    hits = search_messages(repository=REPO, query="quasar").hits
    assert len(hits) == 1 and "mine" in text(hits[0])


def test_a_hit_names_its_session_and_message():
    session = _session("where is the tokenizer?")
    hit = search_messages(repository=REPO, query="tokenizer").hits[0]
    message = Message.objects.get(session=session)
    assert (hit.session_id, hit.message_id) == (session.id, message.id)
    assert hit.session_title == "where is the tokenizer?"


def test_the_index_follows_edited_and_deleted_messages():
    session = _session("first draft mentions zebra")
    message = Message.objects.get(session=session)
    services.message_finish(message_id=message.id, content="final says okapi", status="complete")
    assert search_messages(repository=REPO, query="zebra").hits == []
    assert len(search_messages(repository=REPO, query="okapi").hits) == 1
    session.delete()
    assert search_messages(repository=REPO, query="okapi").hits == []


def test_the_snippet_keeps_message_html_as_text_and_marks_only_the_match():
    _session('<script>alert("x")</script> and <mark>fake</mark> around the needle')
    hit = search_messages(repository=REPO, query="needle").hits[0]
    assert marked(hit) == ["needle"]
    # The snippet may start inside the first tag (PostgreSQL cuts by characters): the
    # closing tag shows the message's HTML stays text, never markup.
    assert "</script>" in text(hit) and "<mark>fake</mark>" in text(hit)


def test_a_short_message_is_its_own_snippet_with_the_match_marked():
    _session("And who calls it?")
    hit = search_messages(repository=REPO, query="calls").hits[0]
    assert text(hit) == "And who calls it?" and marked(hit) == ["calls"]


def test_a_long_message_gives_a_short_snippet_around_the_match():
    _session("filler " * 400 + "the lighthouse keeper " + "filler " * 400)
    hit = search_messages(repository=REPO, query="lighthouse").hits[0]
    text = "".join(p.text for p in hit.parts)
    assert "lighthouse" in text and len(text) < 600


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced',
        "(((",
        "parser)",
        "NEAR(parser lexer)",
        "parser AND OR NOT",
        "col:parser",
        "parser*",
        "^parser",
        "parser -lexer +x",
        "'; DROP TABLE history_message; --",
        "\x00parser\x00",
    ],
)
def test_query_syntax_characters_are_plain_text_and_never_an_error(query):
    _session("The parser and the lexer, NEAR the end.")
    result = search_messages(repository=REPO, query=query)
    assert result.mode in ("ranked", "substring")
    assert Message.objects.count() == 1


def test_a_quoted_phrase_still_finds_its_words():
    _session("the parser reads tokens")
    assert len(search_messages(repository=REPO, query='"parser"').hits) == 1


@pytest.mark.parametrize("query", ["*", "()", "--", "->", "::"])
def test_a_query_without_words_falls_back_to_a_substring_match(query):
    _session(f"before {query} after", "nothing here")
    result = search_messages(repository=REPO, query=query)
    assert result.mode == "substring"
    assert len(result.hits) == 1
    assert [p.text for p in result.hits[0].parts if p.marked] == [query]


def test_a_query_of_ten_thousand_characters_is_cut_and_says_so():
    _session("short message")
    result = search_messages(repository=REPO, query="word " * 2000)
    assert result.truncated
    assert len(result.query) <= MAX_QUERY_CHARS
    assert result.hits == []


def test_hits_carry_the_hashes_of_their_images():
    session = _session("diagram of the pipeline")
    message = Message.objects.get(session=session)
    image = Image.objects.create(
        sha256="a" * 64, mime="image/png", width=1, height=1, size=1, data=b"x", thumbnail=b"y"
    )
    MessageImage.objects.create(message=message, image=image)
    hit = search_messages(repository=REPO, query="pipeline").hits[0]
    assert hit.image_shas == ("a" * 64,)


def test_fts5_terms_are_quoted_with_inner_quotes_doubled():
    assert fts5_query('say "hi" NEAR *') == '"say" """hi""" "NEAR"'
    assert fts5_query("* () --") == ""


def test_the_python_snippet_marks_the_match_whatever_its_case():
    parts = python_snippet("x" * 200 + "Needle" + "y" * 200, "needle")
    assert [p.text for p in parts if p.marked] == ["Needle"]
    assert parts[0].text.startswith("…") and parts[-1].text.endswith("…")


def test_a_huge_message_is_stored_and_found_by_its_beginning():
    words = " ".join(f"w{n}x" for n in range(200_000))
    _session("needleword " + words)
    assert len(search_messages(repository=REPO, query="needleword").hits) == 1


def test_sqlite_ranks_only_the_newest_matches_and_postgresql_ranks_all(monkeypatch):
    from django.db import connection

    from history.search import sqlite

    _session("parser parser parser parser: the best match, but the oldest")
    _session("a parser note")
    _session("another parser note")
    monkeypatch.setattr(sqlite, "CANDIDATES", 2)
    texts = [
        "".join(p.text for p in hit.parts)
        for hit in search_messages(repository=REPO, query="parser").hits
    ]
    assert len(texts) == 3
    if connection.vendor == "sqlite":  # FTS5 ranks a window of the newest CANDIDATES hits;
        assert "oldest" in texts[2]  # older ones come after them, from the substring pass
    else:  # the GIN index ranks every hit cheaply
        assert "oldest" in texts[0]


def test_when_the_store_fails_search_falls_back_to_the_histories_in_memory():
    from django.db import connection

    from history.memory import WorkingHistories

    memory = WorkingHistories()
    memory.remember(
        "sess_1_abcdef",
        "/repo",
        "Parser work",
        [
            {"role": "user", "content": "How does the Tokenizer cache work?", "id": "m1"},
            {"role": "assistant", "content": "It is keyed by content hash.", "id": "m2"},
        ],
    )
    memory.remember("sess_2_abcdef", "/other", "Elsewhere", [{"role": "user", "content": "cache"}])

    def broken(execute, sql, params, many, context):
        raise DatabaseError("the store is unavailable")

    with connection.execute_wrapper(broken):
        results = search_messages(repository="/repo", query="tokenizer CACHE", recent=memory)
    assert results.mode == "memory"
    [hit] = results.hits
    assert (hit.session_id, hit.message_id, hit.role) == ("sess_1_abcdef", "m1", "user")
    assert [p.text for p in hit.parts if p.marked] == ["Tokenizer cache"]


def test_a_search_the_store_cannot_answer_finds_the_working_history():
    from history.memory import WorkingHistories

    memory = WorkingHistories()
    memory.remember("sess_3_abcdef", "/repo", "t", [{"role": "user", "content": "quokka notes"}])
    assert search_messages(repository="/repo", query="quokka", recent=memory).mode == "memory"
    assert search_messages(repository="/repo", query="nothing like it", recent=memory).hits == []
