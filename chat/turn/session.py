"""One session's context, opened once per turn and committed once.

`SessionContext.open` reads in a few queries what a turn needs: the session row with its
layout and last message number, the message rows the working history is derived from
(`chat.turn.working`), the live compactions, and builds the context engine once.
`commit` writes, in one transaction, the small header (the engine's state without its
history, the HUD figures) and, only when they changed, a new layout row and a record of
a history the engine rewrote itself. After-turn work and the CLI use the same object.

One turn at a time per session, across tabs and worker processes: `take_lease` is one
conditional UPDATE on the session row, good on SQLite and PostgreSQL alike; the lease
names its owner and expires, so a worker that dies cannot hold a session for ever, and a
turn that runs long renews it (`end_expired_turn` ends a dead one's reply). Message numbers
come from the session's last one, read with the row; a (session, seq) collision is retried.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Case, F, Max, OuterRef, Q, Subquery, Value, When
from django.utils import timezone

from chat.llm.runtime import calibrated, chat_model, token_counter
from chat.repo import edittools, sessionsets
from chat.turn import working
from chat.turn.hud import COMPACTION_CASES, hud_data, request_setup
from contextcore.llm import Message as ChatMessage
from contextcore.manager import ContextConfig, ContextManager
from contextcore.models import ModelFacts
from history import memory, services
from history.models import Compaction, Message, Session, SessionLayout
from history.stream.parts import end_streaming

log = logging.getLogger(__name__)
HEADER_VERSION = 2
LAYOUT_BODY = ("l0_digest", "snapshot", "updates", "blobs")
USAGE_TAIL = 30  # the HUD sparkline's turns (hud.SPARK_TURNS)
WORKER = f"{socket.gethostname()}:{os.getpid()}"
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
    rows = Session.objects.filter(pk=session_id, turn_owner=owner, turn_stop=False)
    if not extend:  # a read: the row (with its context state) is not written again
        return rows.exists()
    return bool(rows.update(turn_expires=timezone.now() + timedelta(seconds=lease_seconds())))


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
    host = socket.gethostname()
    for session in Session.objects.exclude(turn_owner="").only("turn_owner", "turn_expires"):
        owner_host, _, pid = session.turn_owner.partition(":")
        pid = pid.partition(":")[0]
        gone = owner_host == host and pid.isdigit() and not _alive(int(pid))
        if gone:
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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        pass
    return True


def live_turn(session: Session) -> str:
    """The id of the turn running in the session now, or ""."""
    if session.turn_owner and session.turn_expires and session.turn_expires > timezone.now():
        return session.turn_id
    return ""


def system_prompt() -> str:
    template = (Path(__file__).parent / "prompts" / "system.md").read_text()
    return template.replace("{repository}", Path(settings.ACDC_REPO).name)


def context_config(facts: ModelFacts | None = None) -> ContextConfig:
    return ContextConfig(
        system_prompt=edittools.instruction(system_prompt(), facts),
        tier_scheme=settings.ACDC_TIER_SCHEME,
        compaction_trigger_tokens=settings.ACDC_COMPACTION_TRIGGER_TOKENS or None,
        keep_alive=settings.ACDC_KEEP_WARM,
    )


@dataclass
class SessionContext:
    session: Session
    model: str
    facts: ModelFacts
    warning: str | None
    manager: ContextManager
    rows: working.Rows
    compactions: list[Compaction]
    last_seq: int  # the session's newest message number when opened (or since appended)
    owner: str = ""  # the lease token, when this context runs a turn
    header: dict[str, Any] = field(default_factory=dict)
    # The working history as derived from the rows when opened: the engine holds its own
    # entries, so this is read, never copied again (a rewrite record names its messages).
    history: list[ChatMessage] = field(default_factory=list)
    tools: list[dict] | None = None  # the tool definitions every chat request carries
    breakdown: dict[str, Any] | None = None  # of the turn's request, for the HUD after it
    relevance: float | None = None  # of the related context the turn's request offered
    rewritten: list[ChatMessage] | None = None  # a history the engine cut itself, to record
    rewritten_upto: int = -1
    new_user_turns: int = 0
    edit_calls: int = 0  # edit tool calls this turn made, and its answer's text (None: not
    reply_text: str | None = None  # a turn's context): the after-turn work needs no rows

    # -- opening ---------------------------------------------------------------------

    @classmethod
    def open(cls, session_id: str, *, model: str = "", owner: str = "") -> SessionContext:
        # The last number by the (session, seq) index: a join and GROUP BY would copy the
        # row (header, layout) once per message into a sorter that spills to disk.
        newest = Message.objects.filter(session_id=OuterRef("pk")).order_by("-seq")
        session = (
            Session.objects.select_related("layout")
            .annotate(last_seq=Subquery(newest.values("seq")[:1]))
            .filter(pk=session_id)
            .first()
        )
        if session is None:
            raise SessionMissing(session_id)
        model = chat_model(model or session.model)
        facts, warning, tools = request_setup(model)
        facts = calibrated(facts)
        rows = working.load_rows(session_id)
        header = dict(session.context_state or {})
        # The header counts the live compactions: none, and there is nothing to read.
        none_live = header.get("version") == HEADER_VERSION and header.get("compactions") == 0
        compactions = [] if none_live else working.live_compactions(session_id)
        last_seq = session.last_seq if session.last_seq is not None else -1
        history = working.derive(rows, compactions)
        engine = header.get("engine") or {}
        if header.get("version") != HEADER_VERSION and engine.get("history"):
            history, compactions = _adopt_saved_history(session, engine, history, last_seq)
        guard = sessionsets.file_guard(session_id)
        manager = _build_manager(facts, engine, session.layout, history, guard)
        return cls(
            session=session,
            model=model,
            facts=facts,
            warning=warning,
            manager=manager,
            rows=rows,
            compactions=compactions,
            last_seq=last_seq,
            owner=owner,
            header=header,
            history=history,
            tools=tools,
        )

    @property
    def session_id(self) -> str:
        return self.session.id

    @property
    def user_turns(self) -> int:
        return self.rows.user_turns + self.new_user_turns

    def hud(self) -> dict[str, Any]:
        return dict(self.header.get("hud") or {})

    def usage_tail(self) -> list[list]:
        return list(self.header.get("usage_tail") or [])

    def figures(self, extra_usage: tuple | None = None) -> dict[str, Any]:
        """The HUD figures from what the context already holds (no query when it can): the
        breakdown of the turn's request when it made one, else a preview."""
        known = "usage_tail" in self.header
        extra = [list(extra_usage)] if extra_usage else []
        usage = [*self.usage_tail(), *extra] if known else None
        return hud_data(
            self.session_id,
            self.manager.facts,
            self.manager,
            self.relevance,
            breakdown=self.breakdown,
            usage=usage,
            turns=self.user_turns,
            compactions=sum(c.case in COMPACTION_CASES for c in self.compactions),
        )

    # -- writing ---------------------------------------------------------------------

    def append(self, *, role: str, content: str, **fields: Any) -> Message:
        """Store a message with the next number (re-read if another tab's note took it)."""
        seq = self.last_seq + 1
        try:
            message = Message.objects.create(
                session=self.session, seq=seq, role=role, content=content, **fields
            )
        except IntegrityError:
            if connection.in_atomic_block:
                raise  # the transaction is spoiled on PostgreSQL: its owner tries it again
            message = services.message_append(
                session=self.session, role=role, content=content, **fields
            )
        self.last_seq = message.seq
        if role == Message.Role.USER and not fields.get("system_event"):
            self.new_user_turns += 1
        return message

    def reread_last_seq(self) -> None:
        last = Message.objects.filter(session_id=self.session_id).aggregate(n=Max("seq"))["n"]
        self.last_seq = last if last is not None else -1

    def note_engine_history(self, cut: bool) -> None:
        """After the engine prepared a request: a working history it `cut` to fit (its
        layer 2) is recorded at commit."""
        if cut:
            self.rewritten = self.manager.get_history()
            self.rewritten_upto = self._seq_before_turn()

    def unchanged(self) -> bool:
        """Nothing was written to the session since this context read or committed it: no
        other header (another tab's selection), no message (another tab's note)."""
        row = Session.objects.filter(pk=self.session_id, updated_at=self.session.updated_at)
        last = self.last_seq
        self.reread_last_seq()
        return row.exists() and self.last_seq == last

    def _seq_before_turn(self) -> int:
        return max((seq for seq, _ in self.rows.exchanges), default=-1)

    def commit(
        self,
        *,
        hud: dict[str, Any] | None = None,
        usage: tuple[int, int, float | None] | None = None,
        release: bool = False,
    ) -> None:
        """Write the header (and what changed beside it) in one transaction; with
        `release`, give the turn lease back in the same statement."""
        # Inside the turn's own transaction when there is one, else a transaction of its own.
        with transaction.atomic(savepoint=False):
            if self.rewritten is not None:
                self._record_rewrite()
            header, body = split_state(self.manager)
            header["hud"] = hud if hud is not None else self.header.get("hud")
            tail = self.usage_tail()
            if usage is not None:
                tail = [*tail, list(usage)][-USAGE_TAIL:]
            header["usage_tail"] = tail
            header["compactions"] = len(self.compactions)
            changes: dict[str, Any] = {"updated_at": timezone.now()}
            if header != self.header:
                changes["context_state"] = header
            layout = self.session.layout
            digest = _digest(body) if body is not None else ""
            if digest and (layout is None or layout.digest != digest):
                layout = SessionLayout.objects.create(
                    session_id=self.session_id, digest=digest, body=body
                )
                changes["layout"] = layout
            if self.model != self.session.model:
                changes["model"] = self.model
            if release and self.owner:
                changes.update(turn_owner="", turn_id="", turn_expires=None)
            rows = Session.objects.filter(pk=self.session_id)
            if self.owner:
                rows = rows.filter(turn_owner=self.owner)
            else:  # without the lease, only while nobody holds it
                rows = rows.filter(Q(turn_owner="") | Q(turn_expires__lt=timezone.now()))
            if not rows.update(**changes):
                log.warning(
                    "session %s: the turn lease was lost; header not saved", self.session_id
                )
            else:
                self.header = header
                self.session.updated_at = changes["updated_at"]
                self.session.context_state = header
                self.session.layout = layout
                self.session.model = self.model
        if release:
            self.owner = ""
        memory.remember(
            self.session_id,
            self.session.repository,
            self.session.display_title,
            self.manager.get_history(),
        )

    def _record_rewrite(self) -> None:
        after = working.as_refs(self.rewritten or [], self.history)
        record = Compaction.objects.create(
            session_id=self.session_id,
            case=Compaction.Case.REWRITE,
            reason="The conversation outgrew its budget; the oldest messages were dropped.",
            after=after,
            upto_seq=self.rewritten_upto,
        )
        self.compactions.append(record)
        self.rewritten = None

    def release(self) -> None:
        if self.owner:
            release_lease(self.session_id, self.owner)
            self.owner = ""


def _digest(body: dict[str, Any]) -> str:
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def split_state(manager: ContextManager) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The engine's state as a small header and the layout body. The history is left out
    (the rows hold it); so are the per-message stability counts in the append-only scheme,
    which never reads them (the seed scheme does, and keeps them)."""
    with manager.substituted_history(()):  # taken without it, not copied to be dropped
        state = manager.to_state()
    state.pop("history", None)
    stability = dict(state.get("stability") or {})
    layout = stability.pop("layout", None)
    if stability.get("scheme") == "acdc":
        stability["items"] = _no_history(stability.get("items") or {})
        state["last_items"] = _no_history(state.get("last_items") or {})
    body = None
    if layout:
        body = {key: layout[key] for key in LAYOUT_BODY}
        stability["layout_head"] = {k: v for k, v in layout.items() if k not in LAYOUT_BODY}
    state["stability"] = stability
    return {"version": HEADER_VERSION, "engine": state}, body


def _no_history(items: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in items.items() if not k.startswith("history:")}


def _build_manager(
    facts: ModelFacts,
    engine: dict[str, Any],
    layout: SessionLayout | None,
    history: list,
    guard: Callable[[str], str],
) -> ContextManager:
    counter = token_counter(facts.tokenizer)
    repo = Path(settings.ACDC_REPO)
    if not engine:
        manager = ContextManager(facts, counter, repo_root=repo, config=context_config(facts))
        manager.file_context.guard = guard
        manager.set_history(history)
        return manager
    state = dict(engine)
    # Saved files pass the guard before the engine reads them back.
    state["files"] = [f for f in state.get("files", []) if not guard(f.get("path", ""))]
    stability = dict(state.get("stability") or {})
    head = stability.pop("layout_head", None)
    if head is not None and layout is not None:
        stability["layout"] = {**layout.body, **head}
    state["stability"] = stability
    state["history"] = history
    manager = ContextManager.from_state(
        state, facts, counter, repo_root=repo, config=context_config(facts)
    )
    manager.file_context.guard = guard
    return manager


def _adopt_saved_history(
    session: Session, engine: dict[str, Any], derived: list, last_seq: int
) -> tuple[list, list[Compaction]]:
    """A session saved before the history was derived: its saved history becomes one
    rewrite record of references, once, so what the model sees does not change."""
    saved = [dict(m) for m in engine["history"]]
    Compaction.objects.create(
        session=session,
        case=Compaction.Case.REWRITE,
        reason="Working history adopted from the saved engine state.",
        after=working.as_refs(saved, derived),
        upto_seq=last_seq,
    )
    compactions = working.live_compactions(session.id)
    rows = working.load_rows(session.id)
    return working.derive(rows, compactions), compactions
