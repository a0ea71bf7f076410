"""What a session's keep-alive refreshes cost and saved, and whether they still go out.

A refresh earns its price only if the provider reads the chat's prefix: it counts as
useful when the provider reports at least `USEFUL_SHARE` of the prefix the session's last
request cached (its reported reads plus writes) read again. One that reads less wrote a
new entry instead of renewing the chat's, so the session sends no more refreshes
(`stopped` says why). A useful chain of
refreshes saves something only when the next turn still finds the prefix: then that turn
read what it would otherwise have written, and the difference of the two prices over the
tokens the last refresh read is counted as saved. Plain data, JSON-safe, kept by the
`StabilityTracker` with the session.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

USEFUL_SHARE = 0.95


@dataclass
class RefreshLedger:
    sent: int = 0
    cost: float = 0.0  # what the refreshes were billed, in dollars
    saved: float = 0.0  # what turns after refreshes did not pay to write again
    pending: float = 0.0  # what the current chain saves if the next turn finds the prefix
    stopped: str = ""  # why this session sends no more refreshes ("" while it does)

    def record(
        self, *, prefix_tokens: int, read_tokens: int, cost: float, saving_per_token: float
    ) -> bool:
        """A refresh came back; returns whether it was useful (see the module docstring)."""
        self.sent += 1
        self.cost += cost
        if prefix_tokens > 0 and read_tokens >= USEFUL_SHARE * prefix_tokens:
            self.pending = read_tokens * max(0.0, saving_per_token)
            return True
        self.pending = 0.0
        self.stopped = (
            f"a keep-alive refresh read {read_tokens:,} of the {prefix_tokens:,} tokens "
            "the conversation had cached"
        )
        return False

    def turn_sent(self, prefix_kept: bool) -> None:
        """A turn went out; `prefix_kept`: the refreshed prefix was still cached for it."""
        if prefix_kept:
            self.saved += self.pending
        self.pending = 0.0

    def to_state(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_state(cls, state: Mapping[str, Any] | None) -> RefreshLedger:
        known = {k: v for k, v in (state or {}).items() if k in cls.__dataclass_fields__}
        return cls(**known)
