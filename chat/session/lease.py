"""The turn lease: one turn at a time per session, across tabs and worker processes.

`take_lease` is one conditional UPDATE on the session row, good on SQLite and PostgreSQL
alike; the lease names its owner and expires, so a worker that dies cannot hold a session
for ever, and a turn that runs long renews it (`end_expired_turn` ends a dead one's reply).
A short hold (`held`) guards every other writer of the context header. Stop is a flag on
the same row, read by the running turn. Non-goals: what the holder does with the session.
"""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Case, F, Q, Value, When
from django.utils import timezone

from history import processes, services
from history.models import Message, Session
from history.stream.parts import end_streaming

WORKER = processes.WORKER
SHORT_HOLD_POLL = 0.05


class SessionBusy(Exception):
    """Another turn holds the session; `str(exc)` is a message for the user."""


class SessionMissing(Exception):
    pass


def lease_seconds() -> int:
    return settings.ACDC_TURN_LEASE_SECONDS


def take_lease(session_id: str, turn_id: str, title: str = "", *, wait: float = 2.0) -> str:
    """Hold the session for one turn (or, with no `turn_id`, for one short change of its
    context); returns the owner token. A short hold is waited for (up to `wait` seconds),
    a turn is not. Also gives an untitled session its title, in the same statement."""
    deadline = time.monotonic() + wait
    while True:
        owner = _try_lease(session_id, turn_id, title)
        if owner:
            return owner
        holder = Session.objects.filter(pk=session_id).values_list("turn_id", flat=True).first()
        if holder is None:
            raise SessionMissing(session_id)
        if holder or time.monotonic() >= deadline:
            raise SessionBusy(
                "A reply is already being written in this session (in this or another tab): "
                "wait for it to finish, or press Stop."
            )
        time.sleep(SHORT_HOLD_POLL)


def _try_lease(session_id: str, turn_id: str, title: str) -> str:
    now = timezone.now()
    owner = f"{WORKER}:{uuid.uuid4().hex[:12]}"
    changes: dict[str, Any] = {
        "turn_owner": owner,
        "turn_id": turn_id,
        "turn_stop": False,
        "turn_expires": now + timedelta(seconds=lease_seconds()),
    }
    if title:
        changes["title"] = Case(When(title="", then=Value(title)), default=F("title"))
    free = Q(turn_owner="") | Q(turn_expires=None) | Q(turn_expires__lt=now)
    return owner if Session.objects.filter(free, pk=session_id).update(**changes) else ""


@contextmanager
def held(session_id: str) -> Iterator[str]:
    """The lease for a change outside a turn (selection, compaction, rollback): every
    writer of the context header holds it, so none overwrites another's."""
    owner = take_lease(session_id, "")
    try:
        yield owner
    finally:
        release_lease(session_id, owner)


def renew_lease(session_id: str, owner: str, *, extend: bool = True) -> bool:
    """Extend the turn's lease, or only read it; False when Stop was asked or it was lost."""
    if not extend:  # a read: the row (with its context state) is not written again
        with connection.cursor() as cursor:  # every second of a reply: one statement made once
            cursor.execute(_lease_held(connection.vendor), [session_id, owner, False])
            return cursor.fetchone() is not None
    rows = Session.objects.filter(pk=session_id, turn_owner=owner, turn_stop=False)
    return bool(rows.update(turn_expires=timezone.now() + timedelta(seconds=lease_seconds())))


@functools.lru_cache(maxsize=4)
def _lease_held(vendor: str) -> str:
    """The statement for `vendor`'s database (quoting differs)."""
    quote, fields = connection.ops.quote_name, Session._meta
    names = ("id", "turn_owner", "turn_stop")
    id_, owner, stop = (quote(fields.get_field(name).column) for name in names)
    return (
        f"SELECT 1 FROM {quote(fields.db_table)} WHERE {id_} = %s AND {owner} = %s AND {stop} = %s"
    )


def request_stop(session_id: str) -> None:
    """Stop, as the session row says it: the running turn reads it within a second."""
    Session.objects.filter(pk=session_id).exclude(turn_id="").update(turn_stop=True)


def release_lease(session_id: str, owner: str) -> None:
    Session.objects.filter(pk=session_id, turn_owner=owner).update(
        turn_owner="", turn_id="", turn_expires=None
    )


def end_dead_turns() -> int:
    """At start-up: leases of processes on this machine that are gone are given back at
    once (others expire), and replies they left streaming end as interrupted, with their
    text. Returns how many replies were ended."""
    for session in Session.objects.exclude(turn_owner="").only("turn_owner", "turn_expires"):
        if processes.gone(session.turn_owner):
            release_lease(session.pk, session.turn_owner)
    streaming = Message.objects.filter(status=Message.Status.STREAMING)
    sessions = Session.objects.filter(pk__in=streaming.values("session_id"))
    return sum(end_expired_turn(pk) for pk in sessions.values_list("pk", flat=True))


def end_expired_turn(session_id: str) -> int:
    """Replies left streaming by a turn without a live lease (its worker died) end as
    interrupted with their text; each row's UPDATE keeps the live-lease test."""
    now = timezone.now()
    live = Session.objects.filter(pk=session_id, turn_expires__gt=now).exclude(turn_owner="")
    streaming = Message.objects.filter(session_id=session_id, status=Message.Status.STREAMING)
    ended = streaming.exclude(turn_id__in=live.values("turn_id"))
    return end_streaming(ended, services.INTERRUPTED_NOTE) if ended.exists() else 0  # no lock


def live_turn(session: Session) -> str:
    """The id of the turn running in the session now, or ""."""
    if session.turn_owner and session.turn_expires and session.turn_expires > timezone.now():
        return session.turn_id
    return ""
