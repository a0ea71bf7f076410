"""StabilityTracker: how long each prompt item has stayed unchanged, and the cache layout.

Items are keyed `system`, `file:<path>`, `history:<n>` (later `object:<id>`), each with a
content hash and a count `n` of consecutive requests it appeared unchanged. Two schemes:
- "seed" (seed 000, kept as a baseline): active while n < 3, then L3 (3), L2 (6), L1 (9),
  L0 (12+); the system prompt is always L0; a changed hash sends an item back to active
  and an item that leaves the selection is forgotten.
- "acdc" (default): the append-only layout of `contextcore.prompt.appendonly`, which beats the
  seed on the cache benchmark because promotions never reshuffle the cached prefix.
It also keeps the session's rhythm, the gaps between its requests (on the caller's clock),
which the cache policy reads, and what the last request cached (for how long, for which
model), from which `cache_lost` tells when the cached prefix is known to be gone, and the
keep-alive refreshes that renewed it since (`note_refresh`) with what they cost and saved
(`RefreshLedger`); a compaction does not forget them. Tiers from the reference graph
(`seed_tiers`) are taken on a first request and after such a loss, never while the cache
may hold.
Deterministic (no clock of its own) and serializable: `to_state()` is JSON-safe and
`from_state()` restores it, so a new process keeps the same prompt layout.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from contextcore.prompt.appendonly import LayoutState, digest, expiry_reason
from contextcore.prompt.assembly import PromptInputs, l0_text
from contextcore.prompt.cachepolicy import RHYTHM_LENGTH, refresh_times
from contextcore.prompt.cacherules import FIVE_MINUTES, CacheRules
from contextcore.prompt.refreshledger import RefreshLedger

SCHEMES = ("seed", "acdc")
# (minimum n, tier), checked from the most stable down.
SEED_THRESHOLDS = ((12, "L0"), (9, "L1"), (6, "L2"), (3, "L3"))


def stability_items(inputs: PromptInputs) -> dict[str, str]:
    """One request's items as `StabilityTracker.update` takes them: {key: content hash}."""
    items = {"system": digest(l0_text(inputs) + "\0" + inputs.repo_map)}
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
        self.history_rewrites = 0  # compactions, rollbacks, retries of a laid-out history
        # Seed 000: "tiers rebuild from the reference graph on first request" (and after
        # the cache was lost). Counts an item starts from when it is next seen.
        self._initial: dict[str, int] = {}
        self.gaps: list[float] = []  # seconds between requests, the most recent last
        self.last_request_at: float | None = None
        self.last_model = ""  # the model the last request went to
        self.written_ttl: float | None = None  # seconds its prefix stays cached; 0: none
        self.marked = False  # whether it carried a cache breakpoint at all
        # Keep-alive refreshes since the last request: how many, and when the last one
        # renewed the prefix (its lifetime runs from there).
        self.refreshes = 0
        self.refreshed_at: float | None = None
        self.ledger = RefreshLedger()  # what refreshes cost and saved in the session

    def seed_tiers(
        self, tiers: Mapping[str, str], *, now: float | None = None, model: str = ""
    ) -> bool:
        """Tiers from the reference graph ({key: tier}), taken by a tracker that has seen
        no request yet (a new session) or whose cached prefix is lost (`cache_lost` at
        `now` for `model`): their items start again from their tier's count, as on a first
        request. Ignored otherwise: moving items between tiers rewrites the prompt from the
        first one moved, which would throw away a cache that still holds. Returns whether
        the tiers were taken."""
        if self._items and not self.cache_lost(now, model):
            return False
        counts = {tier: minimum for minimum, tier in SEED_THRESHOLDS}
        self._initial = {key: counts.get(tier, 0) for key, tier in tiers.items()}
        self._items = {k: v for k, v in self._items.items() if k not in self._initial}
        return True

    def cache_lost(self, now: float | None, model: str = "") -> str:
        """Why the prefix the last request cached is known to be gone ("" when it may
        still be cached, or nothing was sent yet): `model` is not the one it went to (a
        cache belongs to one model), or the gap up to `now` outlived the lifetime that
        request wrote (five minutes when it is not known)."""
        if model and self.last_model and model != self.last_model:
            return "model changed"
        return expiry_reason(self.renewed_at, self.written_ttl, now, FIVE_MINUTES)

    @property
    def renewed_at(self) -> float | None:
        """When the cached prefix's lifetime last started: the last request, or the last
        keep-alive refresh after it."""
        return self.refreshed_at if self.refreshed_at is not None else self.last_request_at

    def refresh_plan(self, rules: CacheRules) -> tuple[float, ...]:
        """When (on the callers' clock) the keep-alive refreshes still due since the last
        request go out under `rules`: none when it cached nothing (no breakpoint: a prompt
        below the provider's minimum) or none is worth its read (`refresh_times`)."""
        if self.last_request_at is None or not self.written_ttl or not self.marked:
            return ()
        if self.ledger.stopped:  # a refresh that did not read the prefix: none is sent again
            return ()
        times = refresh_times(rules, self.gaps, self.written_ttl)
        return tuple(self.last_request_at + t for t in times[self.refreshes :])

    def note_refresh(self, now: float) -> None:
        """A keep-alive request read the cached prefix at `now`, renewing its lifetime; it
        is not a turn, so the rhythm does not change."""
        self.refreshes += 1
        self.refreshed_at = now
        if self.layout is not None:
            self.layout = replace(self.layout, last_at=now)

    def rhythm(self, now: float | None) -> tuple[float, ...]:
        """The observed gaps, including the one that ends with a request at `now`."""
        if now is None or self.last_request_at is None:
            return tuple(self.gaps)
        return (*self.gaps, max(0.0, now - self.last_request_at))

    def note_request(
        self,
        now: float | None,
        *,
        model: str = "",
        lifetime: float | None = None,
        marked: bool = True,
    ) -> None:
        """Record that a request was sent at `now` (no gap without a clock) to `model`,
        writing a prefix that stays cached `lifetime` seconds (None: not known), if it
        was `marked` with a breakpoint at all."""
        if self.refreshes:
            self.ledger.turn_sent(not self.cache_lost(now, model))
        self.last_model = model or self.last_model
        self.written_ttl = lifetime
        self.marked = marked
        self.refreshes, self.refreshed_at = 0, None
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
        if self.layout is not None:  # a history was laid out, and is now rewritten
            self.history_rewrites += 1
        self.layout = None

    def to_state(self) -> dict[str, Any]:
        return {
            "scheme": self.scheme,
            "items": {key: [h, n] for key, (h, n) in self._items.items()},
            "versions": {key: list(v) for key, v in self.versions.items()},
            "layout": self.layout.to_dict() if self.layout else None,
            "gaps": list(self.gaps),
            "last_request_at": self.last_request_at,
            "last_model": self.last_model,
            "written_ttl": self.written_ttl,
            "refreshes": self.refreshes,
            "refreshed_at": self.refreshed_at,
            "marked": self.marked,
            "refresh_ledger": self.ledger.to_state(),
            "history_rewrites": self.history_rewrites,
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
        tracker.last_model = state.get("last_model", "")
        tracker.written_ttl = state.get("written_ttl")
        tracker.refreshes = int(state.get("refreshes", 0))
        tracker.refreshed_at = state.get("refreshed_at")
        tracker.marked = bool(state.get("marked", True))
        tracker.ledger = RefreshLedger.from_state(state.get("refresh_ledger"))
        tracker.history_rewrites = int(state.get("history_rewrites", 0))
        return tracker
