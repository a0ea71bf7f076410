"""Records every write of a message's content, the writes the search indexes follow.

SQLite's word and trigram indexes are fed by triggers on INSERT and on UPDATE OF content of
history_message; PostgreSQL recomputes its tsvector column and pg_trgm entries from
content. A trigger of the test's own, on the same events, logs (message id, length of the
content written) to a table, so a test can say how often a reply's text reached the index.
`content_writes` installs it and takes it away again, on either backend.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection

TABLE = "test_content_writes"
SQLITE = [
    f"CREATE TABLE {TABLE} (n INTEGER PRIMARY KEY, message_id TEXT, chars INTEGER)",
    f"""CREATE TRIGGER {TABLE}_insert AFTER INSERT ON history_message BEGIN
        INSERT INTO {TABLE}(message_id, chars) VALUES (new.id, length(new.content));
    END""",
    f"""CREATE TRIGGER {TABLE}_update AFTER UPDATE OF content ON history_message BEGIN
        INSERT INTO {TABLE}(message_id, chars) VALUES (new.id, length(new.content));
    END""",
]
POSTGRES = [
    f"CREATE TABLE {TABLE} (n SERIAL PRIMARY KEY, message_id TEXT, chars INTEGER)",
    f"""CREATE FUNCTION {TABLE}_log() RETURNS trigger AS $$ BEGIN
        INSERT INTO {TABLE}(message_id, chars) VALUES (NEW.id, length(NEW.content));
        RETURN NEW;
    END $$ LANGUAGE plpgsql""",
    f"""CREATE TRIGGER {TABLE}_log AFTER INSERT OR UPDATE OF content ON history_message
        FOR EACH ROW EXECUTE FUNCTION {TABLE}_log()""",
]
DROP = {
    "sqlite": [f"DROP TRIGGER IF EXISTS {TABLE}_{e}" for e in ("insert", "update")],
    "postgresql": [
        f"DROP TRIGGER IF EXISTS {TABLE}_log ON history_message",
        f"DROP FUNCTION IF EXISTS {TABLE}_log()",
    ],
}


@contextmanager
def content_writes() -> Iterator[None]:
    """Log content writes while the block runs (and until `written` is read in it)."""
    _run(POSTGRES if connection.vendor == "postgresql" else SQLITE)
    try:
        yield
    finally:
        _run([*DROP[connection.vendor], f"DROP TABLE IF EXISTS {TABLE}"])


def written(message_id: str) -> list[int]:
    """The lengths of the content written to the message, in order."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT chars FROM {TABLE} WHERE message_id = %s ORDER BY n", [message_id])
        return [row[0] for row in cursor.fetchall()]


def _run(statements: list[str]) -> None:
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
