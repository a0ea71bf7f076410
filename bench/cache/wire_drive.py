"""One scripted session through `acdc serve` over the websocket, against a wire fake.

`drive_session` starts `python -m acdc serve` on a repository holding the session's files,
with the chat model pointed at a `bench.wirefakes.WireFake` (ACDC_MODEL, ACDC_API_BASE)
and the layout chosen by ACDC_TIER_SCHEME, then plays the session as a person in a browser
tab would: the Files panel's selection frames, edits written to disk, each message sent
over the websocket and read to its finished frame. Compaction and keep-alive refreshes are
the server's own. Time is one virtual clock for both sides: the fake's `Clock` and, through
libfaketime (LD_PRELOAD, an offset in a file it re-reads), every clock of the server,
monotonic included (with the monotonic clock left real, libfaketime fails every
`time.sleep` with EINVAL once the offset is not zero). The harness moves it by the gaps
between turns; while the person is away it moves it to each refresh the session's plan
holds, where the server's own keep-warm timer fires; it waits for a compaction's requests
to be answered before moving it. The fake's answers: the turn's scripted answer, or what a
topic detector, summarizer or refresh asks for. Non-goals: images (sent as text).
"""

from __future__ import annotations

import asyncio
import json
import math
import sqlite3
import subprocess
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.live_server import (
    ChatSocket,
    http_client,
    new_session,
    server_environ,
    start_worker,
)
from bench.sessions import Session, prose, write_file
from bench.wirefakes import Reply, WireFake
from contextcore.prompt.cacherules import rules_for
from contextcore.prompt.stability import StabilityTracker

FAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1")
TURN_TIMEOUT = 180.0
REFRESH_WAIT = 15.0  # s for a woken keep-warm loop to send its refresh
DETECTOR_ANSWER = '{"boundary_index": null, "boundary_reason": "", "confidence": 0.2}'
SUMMARY_WORDS = 220
REFRESH_TEXT = "Kept the conversation cached"
AFTER_REPLY_QUIET = 0.8  # s with no request to the fake: a compaction would have begun
FRAMES_QUIET = 0.3  # s with no frame: what the compaction had to show is shown


class VirtualClock:
    """Wall time plus an offset, shared by the fake and (through libfaketime) the server."""

    def __init__(self, fake: WireFake, folder: Path) -> None:
        self.fake, self.file, self.offset = fake, folder / "faketime", 0
        self.file.write_text("+0\n")

    def now(self) -> float:
        return time.time() + self.offset

    def move_to(self, at: float) -> None:
        step = math.ceil(at - self.now())
        if step > 0:
            self.offset += step
            self.file.write_text(f"+{self.offset}\n")
            self.fake.clock.advance(step)


def faketime_available() -> bool:
    return FAKETIME.is_file()


def classify(body: dict[str, Any]) -> str:
    """ "detector", "summarizer", "refresh" or "chat", from the instruction the request
    carries: after the chat's prefix (acdc) or around a fresh transcript (the plain layout)."""
    text = json.dumps([body.get("system"), body.get("messages")], ensure_ascii=False)
    if "Reply with a single period" in text:
        return "refresh"
    if "boundary_index" in text:
        return "detector"
    if "Summarize the earlier part of a conversation" in text:
        return "summarizer"
    return "chat"


@dataclass
class Responder:
    """The fake's answers: side requests by their purpose, chat requests the turn's answer."""

    answer: str = "ok"
    rng: Any = None

    def __call__(self, body: dict[str, Any]) -> Reply:
        kind = classify(body)
        if kind == "detector":
            return Reply(DETECTOR_ANSWER)
        if kind == "summarizer":
            return Reply(prose(self.rng, SUMMARY_WORDS))
        if kind == "refresh":
            return Reply(".")
        return Reply(self.answer)


@dataclass
class Drive:
    """What happened: turn outcomes that were not "complete", and how long it took."""

    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0
    turn_seconds: list[float] = field(default_factory=list)


def server_env(
    session: Session,
    repo: Path,
    data: Path,
    model: str,
    api_base: str,
    strategy: str,
    clock_file: Path,
) -> dict[str, str]:
    extra = {
        "ACDC_MODEL": model,
        "ACDC_API_BASE": api_base,
        "ACDC_TIER_SCHEME": strategy,
        "ANTHROPIC_API_KEY": "sk-ant-wire-fake",
        "OPENAI_API_KEY": "sk-wire-fake",
        "ACDC_KEEP_WARM": "1",
        "ACDC_CHECKPOINT_EVERY": "0",
    }
    if session.compaction_trigger:
        extra["ACDC_COMPACTION_TRIGGER_TOKENS"] = str(session.compaction_trigger)
    if faketime_available():
        extra.update(
            LD_PRELOAD=str(FAKETIME),
            FAKETIME_TIMESTAMP_FILE=str(clock_file),
            FAKETIME_NO_CACHE="1",
        )
    return server_environ(repo, data, extra)


def make_repo(session: Session, repo: Path, when: float) -> None:
    repo.mkdir(parents=True)
    for path, text in session.files.items():
        write_file(repo, path, text, when)
    git = ["git", "-C", str(repo), "-c", "user.email=bench@acdc", "-c", "user.name=bench"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "bench"], check=True)


def drive_session(
    session: Session, folder: Path, fake: WireFake, model: str, api_base: str, strategy: str
) -> Drive:
    """`session` through a fresh `acdc serve` in `folder`; the fake records what it billed."""
    import random

    clock = VirtualClock(fake, folder)
    repo, data = folder / "repo", folder / "data"
    make_repo(session, repo, clock.now())
    responder = Responder(rng=random.Random(99))
    fake.responder = responder
    env = server_env(session, repo, data, model, api_base, strategy, clock.file)
    worker = start_worker(env, folder / "server.log")
    started = time.monotonic()
    try:
        drive = asyncio.run(_play(session, worker.url, repo, data, clock, responder, model, fake))
    finally:
        worker.stop()
    drive.seconds = time.monotonic() - started
    return drive


async def _play(
    session: Session,
    url: str,
    repo: Path,
    data: Path,
    clock: VirtualClock,
    responder: Responder,
    model: str,
    fake: WireFake,
) -> Drive:
    drive = Drive()
    async with http_client() as http:
        session_id = await new_session(http, url)
        tab = await ChatSocket.open(http, url, session_id)
        selected = list(session.selected)
        await _select(tab, selected, "initial")
        for index, turn in enumerate(session.turns):
            arrives = clock.now() + turn.seconds_before
            await _keep_warm(http, url, tab, session_id, data, clock, arrives, model)
            clock.move_to(arrives)
            for path, text in turn.edits.items():
                write_file(repo, path, text, clock.now())
            if turn.add or turn.drop:
                selected = [p for p in selected if p not in turn.drop] + list(turn.add)
                await _select(tab, selected, f"turn{index}")
            responder.answer = turn.answer
            outcome = await tab.turn(turn.user, TURN_TIMEOUT)
            drive.turn_seconds.append(outcome.seconds)
            if session.compaction_trigger:
                await _after_reply_done(fake, tab)
            if outcome.status != "complete":
                drive.failures.append(f"turn {index}: {outcome.status} {outcome.detail}")
        await tab.close()
    return drive


async def _select(tab: ChatSocket, paths: list[str], name: str) -> None:
    """The Files panel's choice; waits for the picker's answer to it."""
    frame = {
        "action": "select",
        "path": paths,
        "selection": name,
        "HEADERS": {"HX-Request": "true"},
    }
    await tab.ws.send_str(json.dumps(frame))
    deadline = time.monotonic() + TURN_TIMEOUT
    while time.monotonic() < deadline:
        message = await tab.ws.receive(timeout=deadline - time.monotonic())
        if answers(message.data, name):
            return
    raise RuntimeError(f"the selection {name} was not answered")


def answers(frame: str, name: str) -> bool:
    """Whether `frame` is the Files panel's answer to the choice named `name`."""
    return f'data-selection="{name}"' in frame


async def _after_reply_done(fake: WireFake, tab: ChatSocket) -> None:
    """Until the compaction a finished turn may start has had its answers and its frames
    are read: the clock must not jump under a request in flight (its time-outs run on the
    faked monotonic clock), and the next turn must not take the conversation frame a
    compaction redraws (every earlier message in it) for its own."""
    deadline = time.monotonic() + TURN_TIMEOUT
    while fake.quiet_for() < AFTER_REPLY_QUIET and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    while True:
        try:
            await tab.ws.receive(timeout=FRAMES_QUIET)
        except TimeoutError:
            return


async def _keep_warm(
    http: Any,
    url: str,
    tab: ChatSocket,
    session_id: str,
    data: Path,
    clock: VirtualClock,
    until: float,
    model: str,
) -> None:
    """Each refresh due before `until`: the clock moved to it, the server's event loop
    woken by a request (its poll waits in real time), its timer sends the refresh and the
    tab is told."""
    while (due := _next_refresh(data, session_id, model)) is not None and due < until:
        clock.move_to(due)
        if not await _wait_for_refresh(http, url, tab):
            break


async def _wait_for_refresh(http: Any, url: str, tab: ChatSocket) -> bool:
    deadline = time.monotonic() + REFRESH_WAIT
    while (left := deadline - time.monotonic()) > 0:
        async with http.get(url + "history/") as poke:  # wakes the server's event loop
            await poke.read()
        try:
            message = await tab.ws.receive(timeout=min(left, 1.0))
        except TimeoutError:
            continue
        if isinstance(message.data, str) and REFRESH_TEXT in message.data:
            return True
    return False


def _next_refresh(data: Path, session_id: str, model: str) -> float | None:
    """The session's next planned refresh, as `chat.session.keepalive.next_refresh` reads it
    (the session row's stability state and the model's cache rules), from the server's
    SQLite database."""
    database = next(data.glob("*.sqlite3"), None)
    if database is None:
        return None
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30) as connection:
        row = connection.execute(
            "SELECT context_state FROM history_session WHERE id = ?", (session_id,)
        ).fetchone()
    if row is None:
        return None
    engine = (_header(row[0]) or {}).get("engine") or {}
    tracker = StabilityTracker.from_state(engine.get("stability") or {})
    plan = tracker.refresh_plan(rules_for(_facts(model)))
    return plan[0] if plan else None


def _header(raw: bytes | str | None) -> Any:
    """The session's context header as `history.models.fields.unpack` reads it: deflated
    JSON, or JSON text as stored before (that module needs Django's apps loaded)."""
    if not raw:
        return None
    data = raw.encode() if isinstance(raw, str) else bytes(raw)
    return json.loads(data if data[:1] in (b"{", b"[") else zlib.decompress(data))


def _facts(model: str) -> Any:
    from chat.llm.facts import model_facts
    from chat.llm.sdk import model_info

    return model_facts(model, model_info)[0]
