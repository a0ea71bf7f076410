"""A session as the turn holds it: the lease, the state codec, the context opened per turn.

`lease` keeps one turn at a time per session; `codec` turns the engine's state into the
session row's header and a layout row and back; `working` derives the working history
from the rows; `setup` works out the model as requests meet it; `context` opens all of
it once per turn and commits it once. The names most callers need are here.
"""

from __future__ import annotations

from chat.turn.session.context import SessionContext, wire, wired
from chat.turn.session.lease import (
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

__all__ = [
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
    "wire",
    "wired",
]
