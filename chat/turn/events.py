"""What a turn reports while it runs, independent of how it is shown.

The consumer renders these as HTML frames for the browser, the CLI prints them to a
terminal. Every event carries the turn id.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class TurnStarted:
    turn_id: str
    session_id: str
    user_message_id: str
    user_text: str
    model: str
    title: str = ""  # the session's title, once the first message has named it
    images: tuple[str, ...] = ()  # sha256 of the images attached to the user message
    mentions: tuple[dict, ...] = ()  # the user message's @-mentions, as stored


@dataclass(frozen=True)
class TurnDelta:
    turn_id: str
    text: str  # the whole answer so far, not only the new piece


@dataclass(frozen=True)
class TurnNotice:
    turn_id: str
    text: str
    level: str = "info"  # info | warning | error
    paths: tuple[str, ...] = ()  # files the notice took out of the selection


@dataclass(frozen=True)
class TurnRetrying(TurnNotice):
    """The model's provider failed before answering and is asked again in `delay` seconds:
    a notice (the terminal prints `text`) that the page shows as a countdown in the reply."""

    reason: str = ""
    delay: float = 0.0
    attempt: int = 2
    attempts: int = 0  # the most attempts the client makes; 0 when it does not say

    @classmethod
    def of(cls, turn_id: str, retry: Any) -> TurnRetrying:
        """From the client's `contextcore.llm.Retrying` event."""
        seconds = math.ceil(retry.delay)
        most = f" of up to {retry.attempts}" if retry.attempts else ""
        text = f"{retry.reason}; retrying in {seconds} s (attempt {retry.attempt}{most})"
        fields = (retry.reason, retry.delay, retry.attempt, retry.attempts)
        return cls(turn_id, text, "warning", (), *fields)


@dataclass(frozen=True)
class TurnFinished:
    turn_id: str
    status: str  # complete | cancelled | interrupted | error
    text: str
    assistant_message_id: str | None
    usage: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    tool_cards: tuple[ToolCallFinished, ...] = ()  # kept when the answer is re-rendered
    question: str = ""  # the user's message, for Retry after a failed or cut reply
    seen: dict[str, Any] | None = None  # what the model saw beside the history (`seen.note`)
    # False when a fault of the disk or database kept the ending from being stored: the
    # turn host stores it once storage is back (`chat.turn.reply.store_late`).
    stored: bool = True


@dataclass(frozen=True)
class ToolCallStarted:
    turn_id: str
    call_id: str
    tool: str
    args_display: str


@dataclass(frozen=True)
class ToolCallFinished:
    turn_id: str
    call_id: str
    tool: str
    args_display: str
    status: str  # ok | fail
    output: str
    object_id: str
    # A command the call left for the person to answer (`ToolResult.proposal`).
    proposal: dict[str, Any] | None = None


@dataclass(frozen=True)
class ToolCallWaiting:
    """A command tool's call waits for the person's answer to its `proposal` (facts:
    `chat.repo.commands.proposal_state.proposal_facts`); sent again as "stopped" on Stop."""

    turn_id: str
    call_id: str
    tool: str
    args_display: str
    proposal: dict[str, Any]


@dataclass(frozen=True)
class ToolCallOutput:
    """What a running command printed lately (its last bytes, `total` in all), for its
    card while it runs (`chat.repo.commands.livefeed`)."""

    turn_id: str
    call_id: str
    text: str
    total: int


@dataclass(frozen=True)
class SetsChanged:
    """The model's tools (or the engine, dropping files: not `touched`) changed the
    session's sets: the file picker shows `paths` again (`active` says which of them are
    now checked); `shed` and `budget` are the last HUD's, for the panel's total; `root`
    is the repository they are files of (the served one)."""

    turn_id: str
    paths: tuple[str, ...]
    active: tuple[str, ...] = ()
    pinned: tuple[str, ...] = ()
    outlines: tuple[str, ...] = ()  # those of `active` sent as their outline
    shed: tuple[str, ...] = ()
    budget: int = 0
    touched: bool = True  # by the model: its rows flash
    root: str = ""


@dataclass(frozen=True)
class HudUpdate:
    turn_id: str
    hud: dict[str, Any]


@dataclass(frozen=True)
class CompactionStarted:
    """Compaction has run longer than a moment: the page says "Compacting…"."""

    session_id: str


@dataclass(frozen=True)
class CompactionEnded:
    """How the after-turn work (compaction, automatic rollback) ended. `state` is complete,
    error or none (nothing changed); when `rerender`, the conversation the page shows is
    no longer the working history and must be drawn again (with `hud` when known)."""

    session_id: str
    state: str
    text: str
    outcome: Any = None  # chat.session.compaction.CompactionOutcome, when one ran
    rerender: bool = False
    hud: dict[str, Any] | None = None


SessionEvent = CompactionStarted | CompactionEnded

TurnEvent = (
    TurnStarted
    | TurnDelta
    | TurnNotice
    | TurnFinished
    | HudUpdate
    | ToolCallStarted
    | ToolCallWaiting
    | ToolCallOutput
    | ToolCallFinished
    | SetsChanged
)


class TurnWatcher(Protocol):
    """Someone outside the tabs who asked for a turn (`acdc chat` through the server): it
    sees the turn's events and the after-turn reports as they happen, is told a refusal
    instead of a tab, and `done` once the session's work for it has ended."""

    async def event(self, event) -> None: ...

    async def refused(self, text: str) -> None: ...

    def done(self) -> None: ...
