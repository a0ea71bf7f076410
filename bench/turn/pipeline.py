"""Whole turns in this process, as the websocket consumer runs them, for `acdc bench turn`.

`full_turn` is `chat.turn.turns.run_turn` with the scripted `acdc/fake` answer and, once
the reply is delivered, `chat.turn.after_turn.after_turn_tasks` (checkpoint, compaction) in
the turn's context, as the browser's turn host runs them. Events are dropped: rendering
and the wire are measured apart (part c). `StatementCounter` counts the SQL statements of
every thread: the turn's ORM work runs in channels' database thread, where a
`CaptureQueriesContext` on the caller's connection would see none of it. `BenchScript`
answers the compaction's detector and summary requests, so a compaction changes the
history as a real model's would. Imports chat's models: load it only after Django is set
up (`bench.django_env`).
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from channels.db import database_sync_to_async
from django.db import connection, connections
from django.db.backends.signals import connection_created

from bench.sessions import prose
from chat.live.served import served
from chat.llm.fake import FakeScript, FakeStep
from chat.llm.sdk import acdc_provider
from chat.session.setchanges import select_files
from chat.turn.after_turn import after_turn_tasks
from chat.turn.turns import TurnInput, TurnServices, run_turn
from history import services
from history.models import Message

MODEL = "acdc/fake"
DETECTOR = '{"boundary_index": null, "boundary_reason": "", "confidence": 0.2}'


class BenchScript(FakeScript):
    """Queued answers for the chat; the compaction's requests answered by purpose."""

    def __init__(self, seed: int = 3) -> None:
        super().__init__()
        self._rng = random.Random(seed)
        self.summaries = 0  # compactions that asked for a summary

    def next_step(self, messages: list[dict[str, Any]], purpose: str | None = None) -> FakeStep:
        if purpose == "topic_detection":
            return FakeStep(text=DETECTOR)
        if purpose == "history_summary":
            self.summaries += 1
            return FakeStep(text=prose(self._rng, 200))
        return super().next_step(messages, purpose)


class StatementCounter:
    """Counts statements by their first word, on every connection of every thread."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, execute, sql, params, many, context):
        with self._lock:
            self.counts[sql.lstrip().split(None, 1)[0].upper()] += 1
        return execute(sql, params, many, context)

    def install(self) -> None:
        connection_created.connect(self._attach, weak=False)
        for wrapper in connections.all(initialized_only=True):
            self._attach(None, wrapper)

    def _attach(self, sender, connection, **kwargs) -> None:
        if self not in connection.execute_wrappers:
            connection.execute_wrappers.append(self)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@dataclass
class TurnCost:
    cpu_s: float
    wall_s: float
    statements: int
    by_verb: dict[str, int]


def install_script() -> BenchScript:
    script = BenchScript()
    acdc_provider().install(script)
    return script


async def new_session(repo: Path, selected: list[str]) -> str:
    session = await database_sync_to_async(services.session_create)(
        repository=str(repo), model=MODEL, title="bench: turn"
    )
    if selected:
        problems = await database_sync_to_async(select_files)(
            session.id, add=selected, model=MODEL, wiring=served()
        )
        if problems:
            raise RuntimeError("selection refused: " + "; ".join(problems))
    return session.id


async def _ignore(event: object) -> None:
    return None


async def _after(ctx) -> None:
    await after_turn_tasks(ctx, _ignore)


async def full_turn(session_id: str, user: str, answer: str, script: BenchScript) -> None:
    script.enqueue(FakeStep(text=answer))
    finished = await run_turn(
        TurnInput(session_id=session_id, user_text=user, model=MODEL),
        TurnServices(emit=_ignore, wiring=served(), after=_after),
    )
    if finished.status != "complete":
        raise RuntimeError(f"turn did not complete: {finished.status} {finished.error}")


async def measured_turn(
    session_id: str, user: str, answer: str, script: BenchScript, counter: StatementCounter
) -> TurnCost:
    before = counter.counts.copy()
    cpu, wall = time.process_time(), time.perf_counter()
    await full_turn(session_id, user, answer, script)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    verbs = counter.counts - before
    return TurnCost(cpu, wall, sum(verbs.values()), dict(verbs))


@database_sync_to_async
def message_count(session_id: str) -> int:
    return Message.objects.filter(session_id=session_id).count()


@database_sync_to_async
def message_text_bytes(session_id: str | None = None) -> int:
    rows = Message.objects.all()
    if session_id:
        rows = rows.filter(session_id=session_id)
    return sum(len(text.encode()) for text in rows.values_list("content", flat=True))


@database_sync_to_async
def checkpoint_and_tables() -> list[list[Any]]:
    """Fold the WAL into the database file; the largest tables and indexes, by bytes."""
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        try:
            cursor.execute(
                "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT 6"
            )
        except Exception:  # SQLite built without the dbstat table
            return []
        return [list(row) for row in cursor.fetchall()]
