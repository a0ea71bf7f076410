"""ContextConfig: how one session's engine behaves, as frozen values the caller builds.

chat builds it from settings and hands it in; contextcore never reads settings. Defaults
are the documented ones: compaction at a sixth of the input budget, shedding files past 90%
of the window, the append-only cache layout. Values that depend on the model's window
(`compaction_trigger`, `layout_policy`) are derived here, in one place.
Non-goal: checking a config against a model or a session (`ContextManager` does).
"""

from __future__ import annotations

from dataclasses import dataclass

from contextcore.budget import default_compaction_trigger
from contextcore.prompt.appendonly import LayoutPolicy

DEFAULT_SYSTEM_PROMPT = (
    "You are an expert software engineer helping with the code in this repository. "
    "Answer precisely and refer to files by their paths."
)
TIER_SCHEMES = ("none", "last", "seed", "acdc")


@dataclass(frozen=True)
class ContextConfig:
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    compaction_enabled: bool = True
    # None: a sixth of the model's input budget (`budget.default_compaction_trigger`).
    compaction_trigger_tokens: int | None = None
    shed_ratio: float = 0.9
    file_size_cap: int = 1_000_000
    # "none": plain layout, no caching; "last": one breakpoint on the last message;
    # "seed": seed 000 tiers; "acdc": append-only layout (contextcore.prompt.appendonly).
    tier_scheme: str = "acdc"
    # None: an eighth of the input budget may be stale copies before a rebuild.
    stale_budget_tokens: int | None = None
    cache_ttl_seconds: float = 300.0
    diff_ratio: float = 0.5
    update_style: str = "auto"
    # The caller refreshes the provider's cache while the person is away (see
    # `ContextManager.refresh_plan`), so lifetimes are chosen counting on it.
    keep_alive: bool = False

    @property
    def keeps_warm(self) -> bool:
        """Whether keep-alive refreshes are planned (only the acdc layout is refreshed)."""
        return self.keep_alive and self.tier_scheme == "acdc"

    def compaction_trigger(self, input_budget: int) -> int:
        """History tokens past which layer 1 compacts, for a model with `input_budget`."""
        configured = self.compaction_trigger_tokens
        return configured if configured else default_compaction_trigger(input_budget)

    def layout_policy(self, input_budget: int) -> LayoutPolicy:
        """The append-only layout's rules, for a model with `input_budget`."""
        stale = self.stale_budget_tokens
        return LayoutPolicy(
            stale_budget_tokens=stale if stale is not None else input_budget // 8,
            cache_ttl_seconds=self.cache_ttl_seconds,
            diff_ratio=self.diff_ratio,
            update_style=self.update_style,
            keep_alive=self.keep_alive,
        )
