"""Identifiers for sessions and messages, in the formats of seed 000.

`sess_{epoch_ms}_{6 hex}` and `{epoch_ms}-{8 hex}`: they sort by creation time as text,
and stay compatible with AC-DC history files that acdc imports.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable

Clock = Callable[[], float]


def _epoch_ms(clock: Clock) -> int:
    return int(clock() * 1000)


def new_session_id(clock: Clock = time.time) -> str:
    return f"sess_{_epoch_ms(clock)}_{secrets.token_hex(3)}"


def new_message_id(clock: Clock = time.time) -> str:
    return f"{_epoch_ms(clock)}-{secrets.token_hex(4)}"


def new_turn_id() -> str:
    return f"t{secrets.token_hex(6)}"
