"""Replaying a scripted session through the real turn pipeline, for the cache benchmark.

Each turn goes through `chat.turn.turns.run_turn` with the offline `acdc/fake` model: the user
message is stored, `chat.session` restores the session's `ContextManager` from the
database and builds the prompt, litellm streams the scripted answer, and the exchange is
stored. The simulator prices the messages exactly as the fake provider received them.
Edits are written to the repository on disk between turns and selection changes go
through `chat.session.setchanges.select_files`, as the Files panel does. The clock is faked only
where the pipeline reads it (`chat.turn.preparation.prepare.time`), so the 400 s pause is
seen by the layout and by the simulated cache alike. A session with a compaction trigger
is compacted after a turn whenever its history passed it, as in the chat
(`chat.session.compaction.compact_session`, detector and summarizer played by `acdc/fake`);
those requests are recorded as side requests. While the person is away, the keep-alive
refreshes an open tab would send go out when due (`keep_warm`, as `chat.live.keepwarm`
does), recorded as refresh requests. The replay records; `cache_pricing` prices.
Imports chat's models, so it loads only after Django is set up (`bench.django_env`).
Each request is recorded with the tool definitions it carried (the provider caches them
first). Non-goals: images (`run_turn` carries text only).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

from channels.db import database_sync_to_async
from django.apps import apps
from django.test import override_settings

import chat.turn.preparation.prepare
from bench.cache.pricing import Recording, Sent
from bench.sessions import START_TIME, Session, Turn, prose, write_file
from chat.live.served import Served
from chat.llm.fake import FakeScript, FakeStep
from chat.llm.runtime import Runtime
from chat.llm.sdk import acdc_provider
from chat.session import Wiring
from chat.session.compaction import compact_session, needs_compaction
from chat.session.keepalive import next_refresh, refresh
from chat.session.setchanges import select_files
from chat.turn.turns import TurnInput, TurnServices, run_turn
from contextcore.models import ModelFacts
from history import services

SUMMARY_WORDS = 220
DETECTOR_ANSWER = '{"boundary_index": null, "boundary_reason": "", "confidence": 0.2}'

MODEL = "acdc/fake"
LIMITATIONS = "The image turn is sent as text only: `run_turn` carries no images."


@dataclass
class FakeClock:
    """Stands in for the `time` module inside `chat.turn.preparation.prepare`."""

    now: float = START_TIME

    def time(self) -> float:
        return self.now


@contextmanager
def scripted_pipeline(repo: Path, strategy: str, clock: FakeClock) -> Iterator[Any]:
    """The fake provider scripted for this replay, the settings and the clock in place."""
    script = FakeScript()
    previous = acdc_provider().install(script)
    try:
        with (
            override_settings(ACDC_REPO=repo, ACDC_TIER_SCHEME=strategy),
            mock.patch.object(chat.turn.preparation.prepare, "time", clock),
        ):
            yield script
    finally:
        acdc_provider().install(previous)


def replay_through_turns(
    session: Session, strategy: str, repo: Path, facts: ModelFacts | None = None
) -> Recording:
    """Replay `session` in `repo` (its files are reset first) with tier scheme `strategy`;
    with `facts`, the fake model is served with those facts (see `cache_pricing.acting_as`)."""
    clock = FakeClock()
    for path, text in session.files.items():
        write_file(repo, path, text, clock.now)
    compaction = {}
    if session.compaction_trigger:
        compaction = {
            "ACDC_COMPACTION_TRIGGER_TOKENS": session.compaction_trigger,
            "ACDC_SMALLER_MODEL": MODEL,
            "ACDC_CHECKPOINT_EVERY": 0,
        }
    runtime = ActingRuntime(facts) if facts else Runtime.from_settings()
    with scripted_pipeline(repo, strategy, clock) as script, override_settings(**compaction):
        # Each replay serves its own: no facts nor maps carried from the last.
        config = apps.get_app_config("chat")
        served = Served.build(runtime=runtime)
        previous, config.served = config.served, served
        try:
            recording = Recording(session.name, strategy)
            asyncio.run(_replay_and_close(session, repo, clock, script, recording, served))
            return recording
        finally:
            config.served = previous


class ActingRuntime(Runtime):
    """The settings' runtime, with one model's facts standing in for every model's."""

    def __init__(self, facts: ModelFacts) -> None:
        super().__init__(Runtime.from_settings().client)
        self.acting = facts

    def facts(self, model: str) -> tuple[ModelFacts, str | None]:
        return self.acting, None


async def _replay_and_close(session: Session, *args: Any) -> None:
    """The replay, then the MCP servers it started stopped in the same loop."""
    served = args[-1]
    try:
        await _replay(session, *args)
    finally:
        if served.repository.mcp is not None:
            await served.repository.mcp.close()


async def _replay(
    session: Session,
    repo: Path,
    clock: FakeClock,
    script: Any,
    recording: Recording,
    served: Wiring,
) -> None:
    stored = await database_sync_to_async(services.session_create)(
        repository=str(repo), model=MODEL, title=f"bench: {session.name} ({recording.strategy})"
    )
    await select_paths(stored.id, served, add=session.selected)
    rng = random.Random(99)
    for index, turn in enumerate(session.turns):
        arrives = clock.now + turn.seconds_before
        await keep_warm(stored.id, clock, arrives, script, recording, served)
        clock.now = arrives
        for path, text in turn.edits.items():
            write_file(repo, path, text, clock.now)
        if turn.add or turn.drop:
            await select_paths(stored.id, served, add=turn.add, drop=turn.drop)
        sent = await scripted_turn(stored.id, turn, script, served)
        recording.sent.append(Sent(sent.messages, clock.now, tools=sent.tools))
        if session.compaction_trigger and await database_sync_to_async(needs_compaction)(
            stored.id, served
        ):
            script.enqueue(FakeStep(text=DETECTOR_ANSWER), FakeStep(text=prose(rng, SUMMARY_WORDS)))
            before = len(script.requests)
            outcome = await compact_session(stored.id, served)
            for request in script.requests[before:]:
                recording.sent.append(
                    Sent(request.messages, clock.now, side=True, tools=request.tools)
                )
            if outcome.changed:
                recording.compactions.append(index)


async def keep_warm(
    session_id: str,
    clock: FakeClock,
    until: float,
    script: Any,
    recording: Recording,
    served: Wiring,
) -> None:
    """While the person is away (up to `until`), what `chat.live.keepwarm` does for an
    open tab: each refresh the plan still holds, sent when it is due."""
    while True:
        due = await database_sync_to_async(next_refresh)(session_id, served.runtime)
        if due is None or due >= until:
            return
        clock.now = max(clock.now, due)
        before = len(script.requests)
        if await refresh(session_id, clock.now, served) is None:
            return
        for request in script.requests[before:]:
            recording.sent.append(
                Sent(request.messages, clock.now, refresh=True, tools=request.tools)
            )


async def select_paths(
    session_id: str, served: Wiring, *, add: tuple[str, ...] = (), drop: tuple[str, ...] = ()
) -> None:
    """Change the session's selection as the Files panel does."""
    problems = await database_sync_to_async(select_files)(
        session_id, add=list(add), drop=list(drop), model=MODEL, wiring=served
    )
    if problems:
        raise RuntimeError("selection refused: " + "; ".join(problems))


async def scripted_turn(session_id: str, turn: Turn, script: Any, served: Wiring) -> Any:
    """One real turn; returns the request the provider received (messages and tools)."""

    async def ignore(event: object) -> None:
        return None

    script.enqueue(FakeStep(text=turn.answer, chunk_size=max(1, len(turn.answer))))
    sent = len(script.requests)
    finished = await run_turn(
        TurnInput(session_id=session_id, user_text=turn.user, model=MODEL),
        TurnServices(emit=ignore, wiring=served),
    )
    if finished.status != "complete" or len(script.requests) != sent + 1:
        raise RuntimeError(f"turn did not complete: {finished.status} {finished.error}")
    return script.requests[-1]
