"""Substring search (seed 000): parts of words are found, whole words rank first, both marked.

Runs on SQLite (FTS5 trigram table) and on PostgreSQL (pg_trgm) alike, with the real
indexes the migrations build.
"""

from __future__ import annotations

import importlib

import pytest
from django.core.management.base import CommandError
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from history import services
from history.models import Message
from history.search import search_messages

pytestmark = pytest.mark.django_db
REPO = "/repo"
BEFORE = ("history", "0012_imported_session_times")
TRIGRAM = ("history", "0013_message_search_trigram")


def _say(*contents: str) -> list[Message]:
    session = services.session_create(repository=REPO)
    return [
        services.message_append(session=session, role="user", content=content)
        for content in contents
    ]


def _content(hit) -> str:
    """The hit's whole message (snippets are cut differently per backend)."""
    return Message.objects.get(pk=hit.message_id).content


def _found(query: str, **options) -> list[tuple[str, list[str]]]:
    """(the hit's message text, its snippet's marked parts) of each hit, best first."""
    return [
        (_content(hit), [p.text for p in hit.parts if p.marked])
        for hit in search_messages(repository=REPO, query=query, **options).hits
    ]


@pytest.mark.parametrize(
    ("query", "content", "mark"),
    [
        ("keniz", "Tokenization splits the text.", "keniz"),
        ("KENIZ", "Tokenization splits the text.", "keniz"),
        ("camelCase", "the camelCaseWords helper", "camelCase"),
        ("parse_", "call parse_frame() first", "parse_"),
        ("_fra", "call parse_frame() first", "_fra"),
        ("ame()", "call parse_frame() first", "ame()"),
    ],
)
def test_part_of_a_word_finds_the_message_with_the_part_marked(query, content, mark):
    _say(content, "nothing to see here")
    [(text, marks)] = _found(query)
    assert text == content
    # SQLite's word index reads "parse_" as the word "parse", so it may mark just that.
    assert marks and all(m.lower() in mark.lower() for m in marks)
    assert mark.lower() in (m.lower() for m in marks) or query == "parse_"


def test_a_substring_hit_says_it_is_inside_a_word_and_a_word_hit_does_not():
    _say("Detokenizer is slow", "the token cache")
    hits = search_messages(repository=REPO, query="token").hits
    assert [(h.whole_words, _content(h)) for h in hits] == [
        (True, "the token cache"),
        (False, "Detokenizer is slow"),
    ]


def test_whole_words_rank_above_substrings_however_often_and_recently_these_occur():
    _say("the parser reads")
    _say("subparser calls subparser, then subparser")  # newer, and more often
    _say("Preparsers, unparsed")  # newest, substring only
    texts = [text for text, _ in _found("parser")]
    assert texts == [
        "the parser reads",
        "Preparsers, unparsed",
        "subparser calls subparser, then subparser",
    ]


def test_a_snippet_marks_the_whole_word_and_the_substring_of_one_query():
    _say("the parser does Tokenization in one pass")
    [(_, marks)] = _found("parser keniz")
    assert sorted(m.lower() for m in marks) == ["keniz", "parser"]


def test_every_piece_must_occur():
    _say("Tokenization only", "the camelCaseWords and Tokenization")
    assert [text for text, _ in _found("keniz camelcas")] == ["the camelCaseWords and Tokenization"]


def test_a_message_with_every_trigram_of_a_piece_but_not_the_piece_is_no_hit():
    # "okeniz" holds "oke", "ken", "eni", "niz", as "smoke kenizen" does in pieces.
    _say("smoke kenizen", "Tokenization")
    assert [text for text, _ in _found("okeniz")] == ["Tokenization"]
    assert [text for text, _ in _found("Kenize")] == ["smoke kenizen"]


def test_the_role_filter_and_the_repository_hold_for_substring_hits():
    session = services.session_create(repository=REPO)
    services.message_append(session=session, role="user", content="Retokenize it")
    services.message_append(session=session, role="assistant", content="Retokenized.")
    other = services.session_create(repository="/elsewhere")
    services.message_append(session=other, role="assistant", content="Retokenized there")
    assert [text for text, _ in _found("etokeniz", role="assistant")] == ["Retokenized."]


def test_a_short_query_matches_whole_words_only_and_says_so():
    _say("the db file", "dbname is set", "mydb only")
    result = search_messages(repository=REPO, query="DB")
    assert result.short
    assert [_content(h) for h in result.hits] == ["the db file"]
    assert not search_messages(repository=REPO, query="dbn").short


def test_a_short_piece_beside_a_long_one_filters_as_a_literal_substring():
    _say("Tokenization a_x", "Tokenization abx", "Tokenization 100%")
    assert [text for text, _ in _found("keniz a_")] == ["Tokenization a_x"]
    assert [text for text, _ in _found("keniz 0%")] == ["Tokenization 100%"]


def test_like_wildcards_in_a_long_piece_are_literal():
    _say("x_y_z here", "xAyBz there", "50%_off")
    assert [text for text, _ in _found("x_y_z")] == ["x_y_z here"]
    assert [text for text, _ in _found("0%_o")] == ["50%_off"]


@pytest.mark.parametrize(
    "query",
    [
        '"keniz',
        'keniz"',
        '"keniz"',
        "keniz*",
        "(keniz",
        "keniz)",
        "-keniz",
        "keniz -x",
        "NEAR(keniz)",
        "keniz NEAR",
        "keniz AND OR NOT",
        "col:keniz",
        "'keniz'",
        "^keniz",
    ],
)
def test_query_syntax_around_a_substring_never_raises(query):
    _say("Tokenization NEAR (the) end")
    result = search_messages(repository=REPO, query=query)
    assert result.mode == "ranked"
    if query.strip('"') == "keniz":
        assert len(result.hits) == 1


@pytest.mark.django_db(transaction=True)
def test_migrating_indexes_the_messages_already_stored():
    [old] = _say("Retokenization from before the migration")
    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes("history")
    executor.migrate([BEFORE])
    try:
        MigrationExecutor(connection).migrate([TRIGRAM])
    finally:  # the later migrations again: the models (a search's rows) need their columns
        MigrationExecutor(connection).migrate(latest)
    hits = search_messages(repository=REPO, query="etokeniz").hits
    assert [(h.message_id, h.whole_words) for h in hits] == [(old.id, False)]
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:  # raises "malformed" when index and text differ
            cursor.execute(
                "INSERT INTO history_message_trigram(history_message_trigram, rank) "
                "VALUES ('integrity-check', 1)"
            )


def test_without_the_substring_index_search_still_finds_parts_of_words():
    _say("Tokenization splits", "nothing")
    table = "history_message_trigram"

    def hidden(execute, sql, params, many, context):
        return execute(sql.replace(table, table + "_gone"), params, many, context)

    with connection.execute_wrapper(hidden):
        assert [text for text, _ in _found("keniz")] == ["Tokenization splits"]


def test_a_postgresql_server_without_pg_trgm_stops_with_a_clear_message():
    module = importlib.import_module("history.migrations." + TRIGRAM[1])
    if connection.vendor != "postgresql":  # SQLite's trigram tokenizer is built in
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM sqlite_master WHERE name = 'history_message_trigram'")
            assert cursor.fetchone() == (1,)
        return

    def absent(execute, sql, params, many, context):
        return execute(sql.replace("'pg_trgm'", "'pg_trgm_absent'"), params, many, context)

    with (
        connection.execute_wrapper(absent),
        connection.schema_editor() as editor,
        pytest.raises(CommandError, match="pg_trgm extension is needed.*contrib"),
    ):
        module.ensure_pg_trigram(editor)


@pytest.mark.parametrize("query", ['"', '""', '" "'])
def test_a_query_of_quotes_finds_quotes_not_every_message(query):
    _say('she said "" twice', "no quotes here")
    hits = search_messages(repository=REPO, query=query).hits
    expected = ['she said "" twice'] if query != '" "' else []
    assert [_content(h) for h in hits] == expected
