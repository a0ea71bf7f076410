"""One session's context, opened once per turn and committed once.

`SessionContext.open` reads in a few queries what a turn needs: the session row with its
layout and last message number, the message rows the working history is derived from
(`chat.session.working`), the live compactions, and builds the context engine once,
with the `Wiring` it was handed (the runtime: client, facts, counters; the repository maps;
the served repository; the working histories the process holds), which its caller got
from an entry point: nothing here looks the process up.
`commit` writes, in one transaction, the small header (`chat.session.codec`), and,
only when they changed, a new layout row and a record of a history the engine rewrote
itself. After-turn work and the CLI use the same object. Message numbers come from the
session's last one, read with the row; a (session, seq) collision is retried.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from django.db import IntegrityError, connection, transaction
from django.db.models import Max, OuterRef, Q, Subquery
from django.utils import timezone

from chat.llm.facts import OFFLINE_MODELS
from chat.llm.runtime import Runtime, chat_model
from chat.repo import sessionsets
from chat.repo.repomap.builder import RepoMaps
from chat.repo.served_repo import ServedRepository
from chat.session import codec, setup, working
from chat.session.codec import HEADER_VERSION
from chat.session.lease import SessionMissing, release_lease
from contextcore.calibration import WINDOW, correction_factor
from contextcore.llm import Message as ChatMessage
from contextcore.manager import ContextManager
from contextcore.models import ModelFacts
from history import selectors, services
from history.memory import WorkingHistories
from history.models import Compaction, Message, Session, SessionLayout

log = logging.getLogger(__name__)
USAGE_TAIL = 30  # the HUD sparkline's turns (hud.SPARK_TURNS)


class Wiring(Protocol):
    """What a session's context uses of what the process serves (`chat.live.served`)."""

    @property
    def runtime(self) -> Runtime: ...

    @property
    def maps(self) -> RepoMaps: ...

    @property
    def repository(self) -> ServedRepository: ...

    @property
    def histories(self) -> WorkingHistories: ...


@dataclass(frozen=True)
class Wired:
    """A `Wiring` of parts held apart (a benchmark's runtime and maps, a test's): entry
    points that hold the served object hand that in instead."""

    runtime: Runtime
    maps: RepoMaps
    repository: ServedRepository
    histories: WorkingHistories = field(default_factory=WorkingHistories)


def calibrated(facts: ModelFacts) -> ModelFacts:
    """`facts` with the token correction its stored requests call for (one query). The
    offline models report what acdc's own counter says: nothing to correct."""
    if facts.name in OFFLINE_MODELS:
        return facts
    samples = selectors.token_samples(model=facts.name, limit=WINDOW)
    return replace(facts, token_factor=correction_factor(samples))


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
    runtime: Runtime  # what opened it: the turn's client, facts and counters
    maps: RepoMaps  # the process's repository maps (the map, outlines, mentions)
    repository: ServedRepository  # the served repository (its path, listings, own writes)
    histories: WorkingHistories  # where `commit` leaves the working history for search
    owner: str = ""  # the lease token, when this context runs a turn
    apply_now: bool = False  # the turn's edits apply when its reply ends (`acdc chat --apply`)
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
    def open(
        cls,
        session_id: str,
        wiring: Wiring,
        *,
        model: str = "",
        owner: str = "",
    ) -> SessionContext:
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
        runtime, maps = wiring.runtime, wiring.maps
        model = chat_model(model or session.model)
        facts, warning, tools = setup.request_setup(runtime, model, session_id)
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
            history, compactions = codec.adopt_saved_history(session, engine, history, last_seq)
        guard = sessionsets.file_guard(
            session_id, wiring.repository.indexed(), session.secret_floor or ()
        )
        counter = runtime.counter(facts.tokenizer)
        root = wiring.repository.root
        manager = codec.build_manager(facts, engine, session.layout, history, guard, counter, root)
        return cls(
            session=session,
            model=model,
            facts=facts,
            warning=warning,
            manager=manager,
            rows=rows,
            compactions=compactions,
            last_seq=last_seq,
            runtime=runtime,
            maps=maps,
            repository=wiring.repository,
            histories=wiring.histories,
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
            header, body = codec.split_state(self.manager)
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
            digest = codec.digest(body) if body is not None else ""
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
        self.histories.remember(
            self.session_id,
            self.session.repository,
            self.session.display_title,
            self.manager.history_view(),
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
