"""The session apart from any one turn: its lease, state, figures and services.

`lease` keeps one turn at a time per session; `codec` turns the engine's state into the
session row's header and a layout row and back; `working` derives the working history
from the rows; `setup` works out the model as requests meet it; `context` opens all of
it once per turn and commits it once. The services a session has between turns live
beside them: checkpoints, compaction, Endless, keep-alive refreshes, the selection
(`sets`, `setchanges`), what leaves for the provider (`outgoing`) and the HUD's figures.
The names most callers need are here.
"""

from __future__ import annotations

from chat.session.context import SessionContext, Wired, Wiring
from chat.session.lease import (
    SessionBusy,
    SessionMissing,
    end_dead_turns,
    end_expired_turn,
    held,
    live_turn,
    release_lease,
    renew_lease,
    request_stop,
    take_lease,
)

__all__ = (
    "SessionBusy",
    "SessionContext",
    "SessionMissing",
    "end_dead_turns",
    "end_expired_turn",
    "held",
    "live_turn",
    "release_lease",
    "renew_lease",
    "request_stop",
    "take_lease",
    "Wiring",
    "Wired",
)
