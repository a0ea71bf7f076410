"""acdc's first request for a message, as a provider would receive it: the real turn.

`AcdcRequests.open(repo)` serves `repo` as `acdc serve` would (`Served.build` under
ACDC_REPO=repo, the offline `acdc/fake` model, whose window is a current Claude model's)
and `first_request(message)` runs one turn of a new session through `run_turn` with no
file ticked, then returns the first chat request the fake received: whatever the real
path puts in it (system prompt, repository map, suggestions, the message) is there, and
nothing else. Any ACDC_* setting of the environment (ACDC_SUGGEST_TOKENS=0,
ACDC_MAP_TOKENS=…) acts as it would on a server. Django is set up by the caller
(`bench.django_env.setup_django`) before this module is imported.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MODEL = "acdc/fake"


@dataclass(frozen=True)
class Sent:
    """The request's text (every message's content, in order) and its token count."""

    text: str
    tokens: int
    messages: int


def _text(messages: list[dict[str, Any]]) -> str:
    parts: list[str] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [str(b.get("text", "")) for b in content if isinstance(b, dict)]
    return "\n\n".join(parts)


class AcdcRequests:
    """One served repository and the fake provider that records what it is sent."""

    def __init__(self, served: Any, script: Any, root: Path) -> None:
        from contextcore.tokens import TokenCounter

        self.served, self.script, self.root = served, script, root
        self.counter = TokenCounter("cl100k_base")

    @classmethod
    @contextmanager
    def open(cls, repo: Path) -> Iterator[AcdcRequests]:
        from django.apps import apps
        from django.test import override_settings

        from chat.live.served import Served
        from chat.llm.fake import FakeScript
        from chat.llm.runtime import Runtime
        from chat.llm.sdk import acdc_provider

        script = FakeScript()
        previous = acdc_provider().install(script)
        config = apps.get_app_config("chat")
        try:
            with override_settings(ACDC_REPO=repo):
                served = Served.build(runtime=Runtime.from_settings())
                held, config.served = config.served, served
                try:
                    yield cls(served, script, repo)
                finally:
                    config.served = held
        finally:
            acdc_provider().install(previous)

    async def first_request(self, message: str) -> Sent:
        from channels.db import database_sync_to_async

        from chat.llm.fake import FakeStep
        from chat.turn.turns import TurnInput, TurnServices, run_turn
        from history import services

        async def ignore(event: object) -> None:
            return None

        session = await database_sync_to_async(services.session_create)(
            repository=str(self.root), model=MODEL, title="bench: localization"
        )
        seen = len(self.script.requests)
        self.script.enqueue(FakeStep(text="Looking."))
        await run_turn(
            TurnInput(session_id=session.id, user_text=message, model=MODEL),
            TurnServices(emit=ignore, wiring=self.served),
        )
        chat = [r for r in self.script.requests[seen:] if not r.metadata.get("purpose")]
        if not chat:
            raise RuntimeError("the turn sent no chat request")
        messages = chat[0].messages
        return Sent(_text(messages), self.counter.count(messages), len(messages))
