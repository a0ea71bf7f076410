"""What a session's panels show, as a few short tokens read in one query.

`read(session_id)` gives one token per panel: the conversation (the newest message and its
status, since a rollback, an edit or a Retry always adds one; the live compactions), the
Context panel (the saved header's time, which every commit moves, and the project
instructions' mark: a few stats of the files on disk), the session tools (the
newest checkpoint, the compaction Undo would take back, Related context) and the model.
Comparing two readings says which panels changed; nothing here renders. While a turn
holds the session's lease (in any process), `busy` is true: its own frames, or its end,
will bring the panels up to date.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from django.db import connection
from django.db.models import Count, OuterRef, Subquery
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from chat.repo import instructions
from history.models import Checkpoint, Compaction, Message, Session

PARTS = ("conversation", "hud", "tools", "model")
FIELDS = (
    *("model", "updated_at", "grounding", "turn_id", "turn_expires", "last_seq", "last_status"),
    *("live_ids", "live_count", "checkpoint_id"),
)


@dataclass(frozen=True)
class Version:
    parts: dict[str, str]
    busy: bool
    model: str
    instructions: str = ""  # their mark on disk (part of the "hud" part too)

    def changed(self, before: Version | None) -> set[str]:
        if before is None:
            return set()
        return {p for p in PARTS if self.parts[p] != before.parts[p]}

    @property
    def token(self) -> str:
        """Short enough for the page's socket address: one hash per panel."""
        return ".".join(_short(self.parts[p]) for p in PARTS)

    def changed_since(self, token: str) -> set[str]:
        """The panels that changed since the page drew `token` (none for a bad token)."""
        seen = token.split(".")
        if len(seen) != len(PARTS):
            return set()
        return {p for p, was in zip(PARTS, seen, strict=True) if _short(self.parts[p]) != was}


def _short(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:8]


def _one(queryset, field: str) -> Subquery:
    return Subquery(queryset.values(field)[:1])


def _count(queryset) -> Subquery:
    return Subquery(queryset.values("session").annotate(n=Count("pk")).values("n")[:1])


def read(session_id: str, root: Path) -> Version | None:
    """The session's panel tokens (None: no such session). An open tab asks every
    ACDC_PANEL_POLL_MS, all day: the query is built once per database (`_compiled`);
    building it with the ORM each time cost 2 ms, running it 10 µs."""
    sql, slots, params, names = _compiled(connection.alias, connection.vendor)
    arguments = [session_id if i in slots else p for i, p in enumerate(params)]
    with connection.cursor() as cursor:
        cursor.execute(sql, arguments)
        found = cursor.fetchone()
    if found is None:
        return None
    row = dict(zip(names, found, strict=True))
    compactions = f"{row['live_ids']}/{row['live_count']}"
    updated = _moment(row["updated_at"])
    mark = instructions.mark(root)
    parts = {
        "conversation": f"{row['last_seq']}:{row['last_status']}:{compactions}",
        # The instructions on disk too: a new AGENTS.md changes the panel, not the row.
        "hud": f"{updated.isoformat() if updated else ''}|{mark}",
        "tools": f"{row['checkpoint_id']}:{compactions}:{_flag(row['grounding'])}",
        "model": row["model"],
    }
    expires = _moment(row["turn_expires"])
    busy = bool(row["turn_id"]) and (expires is None or expires > timezone.now())
    return Version(parts=parts, busy=busy, model=row["model"], instructions=mark)


def queryset(session_id: str):
    """The session's row with what the tokens are made of, as the ORM asks for it."""
    messages = Message.objects.filter(session_id=OuterRef("pk"))
    live = Compaction.objects.filter(session_id=OuterRef("pk"), undone_at=None)
    checkpoints = Checkpoint.objects.filter(session_id=OuterRef("pk"))
    return (
        Session.objects.filter(pk=session_id)
        .annotate(
            last_seq=_one(messages.order_by("-seq"), "seq"),
            last_status=_one(messages.order_by("-seq"), "status"),
            live_ids=_one(live.order_by("-pk"), "pk"),
            live_count=_count(live),
            checkpoint_id=_one(checkpoints.order_by("-pk"), "pk"),
        )
        .values(*FIELDS)[:1]
    )


_PLACEHOLDER = "\x00session\x00"


@functools.lru_cache(maxsize=8)
def _compiled(alias: str, vendor: str) -> tuple[str, frozenset[int], tuple, tuple[str, ...]]:
    """`queryset`'s SQL for this database, where its session id goes among the
    parameters, and the columns' names in order."""
    query = queryset(_PLACEHOLDER).query
    sql, params = query.get_compiler(alias).as_sql()
    slots = frozenset(i for i, p in enumerate(params) if p == _PLACEHOLDER)
    if not slots:
        raise RuntimeError("the version query names no session")  # Django changed its SQL
    names = (*query.extra_select, *query.values_select, *query.annotation_select)
    return sql, slots, tuple(params), names


def _flag(value) -> bool | None:
    return None if value is None else bool(value)  # SQLite gives 0 and 1


def _moment(value) -> datetime | None:
    """A date and time as the database gave it without the ORM (SQLite: text), made aware."""
    if value is None or value == "":
        return None
    moment = value if isinstance(value, datetime) else parse_datetime(str(value))
    if moment is not None and timezone.is_naive(moment):
        moment = timezone.make_aware(moment, UTC)
    return moment


def page_token(session_id: str, root: Path) -> str:
    """What a page about to be drawn shows, for its socket to say when it connects."""
    found = read(session_id, root)
    return found.token if found else ""


def tools_token(session_id: str, root: Path) -> str:
    """The session tools' token, for the fragment to carry (the tab refetches on a change)."""
    found = read(session_id, root)
    return found.parts["tools"] if found else ""
