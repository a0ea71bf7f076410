"""What a one-line turn writes to the database (issue 42 item 13): its writes, by table, and
the transactions they are committed in, counted on every connection of every thread (the
turn's ORM work runs in channels' database thread) through the real path: the websocket,
the turn host, the turn and its after-turn work, with the offline `acdc/fake`. Each commit
appends the pages it changed to SQLite's write-ahead log, the pages shared with the next
commit (the file's first page, the free list, the message indexes) once more."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator

import pytest
from django.db import connections
from django.db.backends.signals import connection_created

from tests.chat.sockets import connect, new_session
from tests.chat.turn.test_computed_once import _turn

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("served_root")]
VERBS = ("INSERT", "UPDATE", "DELETE")


class Writes:
    """Each write statement as (verb, table), and the transaction it was committed in: its
    connection's outermost atomic block, or a transaction of its own in autocommit."""

    def __init__(self) -> None:
        self.writes: Counter[tuple[str, str]] = Counter()
        self.transactions: set[object] = set()
        self._lock = threading.Lock()
        self._n = 0

    def __call__(self, execute, sql, params, many, context):
        words = sql.split(None, 3)
        verb = words[0].upper() if words else ""
        if verb in VERBS:
            table = words[2] if verb in ("INSERT", "DELETE") else words[1]
            atomic = context["connection"].atomic_blocks
            with self._lock:
                self._n += 1
                self.writes[(verb, table.strip('"'))] += 1
                self.transactions.add(id(atomic[0]) if atomic else ("autocommit", self._n))
        return execute(sql, params, many, context)

    def attach(self, sender, connection, **kwargs) -> None:
        if self not in connection.execute_wrappers:
            connection.execute_wrappers.append(self)


@pytest.fixture
def writes() -> Iterator[Writes]:
    counted = Writes()
    connection_created.connect(counted.attach, weak=False)
    for wrapper in connections.all(initialized_only=True):
        counted.attach(None, wrapper)
    yield counted
    connection_created.disconnect(counted.attach)
    for wrapper in connections.all(initialized_only=True):
        if counted in wrapper.execute_wrappers:
            wrapper.execute_wrappers.remove(counted)


async def test_a_one_line_turn_writes_five_rows_in_two_transactions(fake, writes):
    session = await new_session()
    ws = await connect(session.id)
    for n in range(2):  # the first turns write what a session writes once
        await _turn(ws, session.id, f"Question {n}?")
    writes.writes.clear()
    writes.transactions.clear()

    await _turn(ws, session.id, "Make step return the doubled count.")

    assert dict(writes.writes) == {
        ("UPDATE", "history_session"): 2,  # the lease taken; the state saved, lease given back
        ("INSERT", "history_message"): 2,  # the person's message; the reply
        ("INSERT", "history_tokenusage"): 1,
    }
    # The lease and the person's message in one, the reply with its usage and the
    # session's state in the other.
    assert len(writes.transactions) == 2
    await ws.disconnect()
