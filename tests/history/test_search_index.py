"""The search indexes follow every write to a message; on SQLite they index, never copy.

On SQLite (migrations 0009, 0013 and 0029) each test ends with FTS5's integrity check of the
word and the trigram index against the message table, once the messages not yet indexed
are (0029: on read), which fails as soon as an index and the text it points at disagree (a
missed trigger, a renumbered row, a message indexed twice). PostgreSQL's generated column
is recomputed by every write, and pg_trgm's index is an ordinary index.
"""

from __future__ import annotations

import importlib
import random

import pytest
from django.db import connection

from history import services
from history.models import Message
from history.search import pending, search_messages
from history.stream.parts import stream_append

pytestmark = pytest.mark.django_db
REPO = "/repo"
MIGRATION = importlib.import_module("history.migrations.0009_message_search_external")
ON_READ = importlib.import_module("history.migrations.0029_search_index_on_read")
_VOCABULARY = """parser lexer token cache tier prompt session message stream commit branch merge
review search index snippet budget window summary compaction checkpoint rollback model
provider usage latency retry socket frame template fragment widget config schema"""
WORDS = _VOCABULARY.split()


def _prose(size: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    count = size // 6 + 1  # the words average more than five letters and a space
    return " ".join(rng.choices(WORDS, k=count))[:size]


def _used_bytes() -> int:
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":  # the table with its TOAST and indexes
            cursor.execute("SELECT pg_total_relation_size('history_message')")
            return cursor.fetchone()[0]
        pages = cursor.execute("PRAGMA page_count").fetchone()[0]
        free = cursor.execute("PRAGMA freelist_count").fetchone()[0]
        size = cursor.execute("PRAGMA page_size").fetchone()[0]
    return (pages - free) * size


def _generated_search_column() -> bool:
    """PostgreSQL's index source: a column the database recomputes on every write."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT is_generated FROM information_schema.columns "
            "WHERE table_name = 'history_message' AND column_name = 'search_vector'"
        )
        row = cursor.fetchone()
    return row is not None and row[0] == "ALWAYS"


def _assert_index_matches_messages() -> None:
    if connection.vendor != "sqlite":
        return
    pending.catch_up()
    with connection.cursor() as cursor:  # raises "malformed" on any disagreement
        for table in ("history_message_fts", "history_message_trigram"):
            cursor.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")


def _hits(query: str) -> list[tuple[str, list[str]]]:
    """(message id, marked words) of each hit: snippets are cut differently per backend."""
    return [
        (hit.message_id, [p.text.lower() for p in hit.parts if p.marked])
        for hit in search_messages(repository=REPO, query=query).hits
    ]


def _tables() -> set[str]:
    return set(connection.introspection.table_names())


def _trigram_index_bytes() -> int:
    """The substring index's own storage: trigrams and the messages holding them."""
    if connection.vendor != "sqlite":
        return 0  # PostgreSQL's GIN index holds one entry per distinct trigram of a row
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(sum(length(block)), 0) FROM history_message_trigram_data")
        return cursor.fetchone()[0]


def _pg_trigram_index() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'history_message_trigram'"
        )
        row = cursor.fetchone()
    return row is not None and "gin_trgm_ops" in row[0]


def test_the_indexes_keep_no_copy_of_the_text():
    if connection.vendor == "postgresql":
        assert "history_message_fts" not in _tables() and _generated_search_column()
        assert _pg_trigram_index()
        return
    assert {"history_message_fts", "history_message_trigram"} <= _tables()
    assert "history_message_fts_content" not in _tables()
    assert "history_message_trigram_content" not in _tables()


def test_every_migration_leaves_the_triggers_that_keep_the_index_current():
    # Django rebuilds a table on SQLite for most field changes, which drops its triggers:
    # a later migration that rebuilds history_message must call 0029's restore_search.
    # A new message is indexed on read (0029): no insert trigger, one trigger each for an
    # edit and a removal of a message the indexes hold.
    if connection.vendor == "postgresql":
        assert _generated_search_column()
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = %s",
            ["history_message"],
        )
        names = {row[0] for row in cursor.fetchall()}
    assert {n for n in names if "_fts_" in n or "_trigram_" in n or "_search_" in n} == {
        "history_message_search_update",
        "history_message_search_delete",
    }


def test_a_megabyte_message_grows_the_database_by_one_copy_and_its_indexes():
    session = services.session_create(repository=REPO)
    text = _prose(1_000_000)
    before, trigrams_before = _used_bytes(), _trigram_index_bytes()
    services.message_append(session=session, role="user", content=text)
    trigrams = _trigram_index_bytes() - trigrams_before
    grown = _used_bytes() - before - trigrams
    # The text once (1 MB) plus the word index's positions; a second copy would pass 2 MB.
    # The trigram index (counted apart) names each distinct trigram once, no positions
    # (0021; with them it took 1.7 bytes a character). (PostgreSQL compresses the text, so
    # only the upper bound holds there.)
    assert grown < 1.5 * len(text) and trigrams < 0.1 * len(text)
    if connection.vendor == "sqlite":
        assert len(text) <= grown
    _assert_index_matches_messages()


def test_a_streamed_message_is_found_once_it_ends_by_the_text_it_ended_with():
    session = services.session_create(repository=REPO)
    message = services.message_append(
        session=session, role="assistant", content="", status=Message.Status.STREAMING
    )
    shown = ""
    for piece in ("Looking", " at the aardvark", ", no: okapi"):
        stream_append(message_id=message.id, offset=len(shown), text=piece)
        shown += piece
    assert _hits("aardvark") == []  # the index waits for the end of the reply
    services.message_finish(message_id=message.id, content="The okapi it is.", status="complete")
    assert _hits("aardvark") == [] and _hits("looking") == []
    assert _hits("okapi") == [(message.id, ["okapi"])]
    _assert_index_matches_messages()


def test_deleted_messages_leave_the_others_found():
    session = services.session_create(repository=REPO)
    messages = [
        services.message_append(session=session, role="user", content=f"zebra note {n}")
        for n in range(6)
    ]
    gone = {messages[1].pk, messages[4].pk}
    Message.objects.filter(pk__in=gone).delete()
    kept = sorted((m.id, ["zebra"]) for m in messages if m.pk not in gone)
    assert sorted(_hits("zebra")) == kept
    _assert_index_matches_messages()


def test_rolled_back_messages_and_other_sessions_are_found_as_before():
    first = services.session_create(repository=REPO)
    second = services.session_create(repository=REPO)
    old = services.message_append(session=first, role="user", content="the quokka plan")
    other = services.message_append(session=second, role="user", content="quokka, again")
    Message.objects.filter(pk=old.pk).update(rolled_back=True, pinned=True)
    hits = search_messages(repository=REPO, query="quokka").hits
    assert sorted((h.session_id, h.message_id) for h in hits) == sorted(
        [(first.id, old.id), (second.id, other.id)]
    )
    _assert_index_matches_messages()


@pytest.mark.django_db(transaction=True)
def test_vacuum_keeps_every_message_at_the_row_its_index_entry_names():
    session = services.session_create(repository=REPO)
    messages = [
        services.message_append(session=session, role="user", content=f"heron note {n}")
        for n in range(9)
    ]
    Message.objects.filter(pk__in=[m.pk for m in messages[::3]]).delete()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM")
    _assert_index_matches_messages()
    kept = sorted((m.id, ["heron"]) for i, m in enumerate(messages) if i % 3)
    assert sorted(_hits("heron")) == kept


@pytest.mark.django_db(transaction=True)
def test_the_migration_goes_back_to_a_copied_index_and_forward_again():
    session = services.session_create(repository=REPO)
    message = services.message_append(session=session, role="user", content="the ibis log")
    with connection.schema_editor() as editor:  # back as the migrations go: 0029 first
        ON_READ._on_write(None, editor)
        MIGRATION._restore_copy(None, editor)
    if connection.vendor == "postgresql":  # nothing to undo there: the column stays
        assert _generated_search_column() and _hits("ibis") == [(message.id, ["ibis"])]
        return
    assert "history_message_fts_content" in _tables()
    with connection.cursor() as cursor:
        cursor.execute("SELECT message_id FROM history_message_fts WHERE content MATCH 'ibis'")
        assert cursor.fetchall() == [(message.id,)]
    Message.objects.filter(pk=message.pk).update(content="the ibis log, longer")
    with connection.schema_editor() as editor:
        ON_READ.restore_search(None, editor)  # 0009's index, and the later ones as they are
    assert "history_message_fts_content" not in _tables()
    assert _hits("longer") == [(message.id, ["longer"])]
    _assert_index_matches_messages()


def _indexed_rows() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM history_message_fts_docsize")
        return cursor.fetchone()[0]


def test_storing_a_message_leaves_the_indexes_to_the_next_read():
    # Issue 42 item 13: a turn's commits wrote 16 pages of search index for two messages.
    # (PostgreSQL's generated column and GIN index are kept by each write, as before.)
    session = services.session_create(repository=REPO)
    sqlite = connection.vendor == "sqlite"
    before = _indexed_rows() if sqlite else 0
    stored = [
        services.message_append(session=session, role=role, content=f"the gecko {role}")
        for role in ("user", "assistant")
    ]
    assert (_indexed_rows() if sqlite else 0) == before  # nothing indexed by the writes
    assert sorted(_hits("gecko")) == sorted((m.id, ["gecko"]) for m in stored)
    if not sqlite:
        return
    assert _indexed_rows() == before + 2 and pending.catch_up() == 0
    _assert_index_matches_messages()


def test_edits_and_removals_on_both_sides_of_the_mark_keep_the_indexes_exact():
    session = services.session_create(repository=REPO)
    old = [services.message_append(session=session, role="user", content=f"lynx {n}") for n in "ab"]
    _hits("lynx")  # indexes these two
    new = services.message_append(session=session, role="user", content="lynx c")
    Message.objects.filter(pk=old[0].pk).update(content="ocelot a")  # indexed: kept exact
    Message.objects.filter(pk=new.pk).update(content="ocelot c")  # not yet: nothing to undo
    Message.objects.filter(pk__in=[old[1].pk, new.pk]).delete()  # the newest rows go
    # The next message takes a rowid at or below the one that was indexed last.
    last = services.message_append(session=session, role="user", content="ocelot d")
    _assert_index_matches_messages()
    assert sorted(_hits("ocelot")) == sorted((m.id, ["ocelot"]) for m in (old[0], last))
    assert _hits("lynx") == []
