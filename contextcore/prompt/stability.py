"""StabilityTracker: how long each prompt item has stayed unchanged, and the cache layout.

Items are keyed `system`, `file:<path>`, `history:<n>` (later `object:<id>`), each with a
content hash and a count `n` of consecutive requests it appeared unchanged. Two schemes:
- "seed" (seed 000, kept as a baseline): active while n < 3, then L3 (3), L2 (6), L1 (9),
  L0 (12+); the system prompt is always L0; a changed hash sends an item back to active
  and an item that leaves the selection is forgotten.
- "acdc" (default): the append-only layout of `contextcore.prompt.appendonly`, which beats the
  seed on the cache benchmark because promotions never reshuffle the cached prefix.
It also keeps the session's rhythm, the gaps between its requests (on the caller's clock),
which the cache policy reads; a compaction does not forget it.
Deterministic (no clock of its own) and serializable: `to_state()` is JSON-safe and
`from_state()` restores it, so a new process keeps the same prompt layout.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contextcore.prompt.appendonly import LayoutState, digest
from contextcore.prompt.assembly import PromptInputs
from contextcore.prompt.cachepolicy import RHYTHM_LENGTH

SCHEMES = ("seed", "acdc")
TIERS = ("L0", "L1", "L2", "L3", "active")
# (minimum n, tier), checked from the most stable down.
SEED_THRESHOLDS = ((12, "L0"), (9, "L1"), (6, "L2"), (3, "L3"))


def stability_items(inputs: PromptInputs) -> dict[str, str]:
    """One request's items as `StabilityTracker.update` takes them: {key: content hash}."""
    items = {"system": digest(inputs.system_prompt + "\0" + inputs.repo_map)}
    items.update({f"file:{p}": digest(t) for p, t in inputs.files})
    keys = inputs.history_keys or [f"history:{i}" for i in range(len(inputs.history))]
    for key, message in zip(keys, inputs.history, strict=True):
        if key:
            items[key] = digest(f"{message.get('role')}\0{message.get('content')}")
    return items


class StabilityTracker:
    def __init__(self, scheme: str = "acdc") -> None:
        if scheme not in SCHEMES:
            raise ValueError(f"unknown tier scheme {scheme!r}; choose one of {SCHEMES}")
        self.scheme = scheme
        self._items: dict[str, tuple[str, int]] = {}
        # {key: [version, digest]} of every document ever shown; versions only go up, so
        # "version 3" means the same text for the whole session.
        self.versions: dict[str, list[Any]] = {}
        self.layout: LayoutState | None = None
        # Seed 000: "tiers rebuild from the reference graph on first request". Counts an
        # item starts from when it is first seen, set while the tracker holds no items.
        self._initial: dict[str, int] = {}
        self.gaps: list[float] = []  # seconds between requests, the most recent last
        self.last_request_at: float | None = None

    def seed_tiers(self, tiers: Mapping[str, str]) -> None:
        """Initial tiers ({key: tier}) for a tracker that has seen no request yet (a new
        session, or after the cache was lost): an item starts at its tier's count instead
        of as active. Ignored once items are tracked."""
        if self._items:
            return
        counts = {tier: minimum for minimum, tier in SEED_THRESHOLDS}
        self._initial = {key: counts[tier] for key, tier in tiers.items() if tier in counts}

    def rhythm(self, now: float | None) -> tuple[float, ...]:
        """The observed gaps, including the one that ends with a request at `now`."""
        if now is None or self.last_request_at is None:
            return tuple(self.gaps)
        return (*self.gaps, max(0.0, now - self.last_request_at))

    def note_request(self, now: float | None) -> None:
        """Record that a request was sent at `now` (nothing without a clock)."""
        if now is None:
            return
        self.gaps = list(self.rhythm(now))[-RHYTHM_LENGTH:]
        self.last_request_at = now

    def update(self, items: Mapping[str, str]) -> None:
        """Record one request's items ({key: content hash}), after its response arrived."""
        fresh: dict[str, tuple[str, int]] = {}
        for key, content_hash in items.items():
            old = self._items.get(key)
            fresh[key] = (
                (content_hash, old[1] + 1)
                if old and old[0] == content_hash
                else (content_hash, 0 if old else self._initial.get(key, 0))
            )
        self._items = fresh
        self._initial = {}

    def count_of(self, key: str) -> int:
        item = self._items.get(key)
        return item[1] if item else self._initial.get(key, 0)

    def tier_of(self, key: str) -> str:
        if key == "system":
            return "L0"
        count = self.count_of(key)
        return next((tier for minimum, tier in SEED_THRESHOLDS if count >= minimum), "active")

    def items(self) -> dict[str, tuple[str, int]]:
        return dict(self._items)

    def purge_history(self) -> None:
        """Forget every history item; the acdc layout is rebuilt on the next request."""
        self._items = {k: v for k, v in self._items.items() if not k.startswith("history:")}
        self.layout = None

    def to_state(self) -> dict[str, Any]:
        return {
            "scheme": self.scheme,
            "items": {key: [h, n] for key, (h, n) in self._items.items()},
            "versions": {key: list(v) for key, v in self.versions.items()},
            "layout": self.layout.to_dict() if self.layout else None,
            "gaps": list(self.gaps),
            "last_request_at": self.last_request_at,
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> StabilityTracker:
        tracker = cls(state.get("scheme", "acdc"))
        tracker._items = {key: (h, int(n)) for key, (h, n) in state.get("items", {}).items()}
        tracker.versions = {key: list(v) for key, v in state.get("versions", {}).items()}
        layout = state.get("layout")
        tracker.layout = LayoutState.from_dict(layout) if layout else None
        tracker.gaps = [float(g) for g in state.get("gaps", [])]
        tracker.last_request_at = state.get("last_request_at")
        return tracker
