"""The cache benchmark's judgement: each layout's cost against no caching and one breakpoint,
the goals (d) must meet, and the tables and data that show them.

Pure functions over priced reports (`contextcore.prompt.cachesim.SimulationReport`):
`priced` prices the recorded requests of every layout under one rule set, `compare` turns
the reports into rows, `goal_misses` says in words which goals acdc's layout misses, and
`shape_markdown` and `rows_as_data` write one session shape's table and data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bench.cache.pricing import Recording, price
from bench.report import markdown_table
from contextcore.prompt.cacherules import NO_CACHE, CacheRules
from contextcore.prompt.cachesim import SimulationReport
from contextcore.tokens import TokenCounter

STRATEGIES = ("none", "last", "seed", "acdc")
REPLAYED = ("last", "seed", "acdc")  # (a) is (b)'s requests priced with no caching
LABELS = {
    "none": "(a) no caching",
    "last": "(b) one breakpoint / plain prefix",
    "seed": "(c) seed tiers",
    "acdc": "(d) acdc",
}
GOAL_VS_BEST = 0.85  # of the best simple layout, (b) or (c), under explicit breakpoints
GOAL_LONG_VS_LAST = 0.6  # of (b), the long session under explicit breakpoints
LONG_SESSION = "long session with compaction"
GOAL_VS_NONE = 0.25  # of no caching, where reads cost 0.1x
PAUSE_SESSION = "long pauses"  # where acdc must never cost more than no caching


@dataclass(frozen=True)
class StrategyRow:
    strategy: str
    prompt_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost: float
    vs_none: float
    vs_last: float

    @property
    def cache_read_share(self) -> float:
        return self.cache_read_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


def compare(reports: Mapping[str, SimulationReport]) -> list[StrategyRow]:
    """One row per strategy, in STRATEGIES order, with cost ratios against (a) and (b)."""
    base, last = reports["none"].cost, reports["last"].cost
    return [
        StrategyRow(
            strategy=name,
            prompt_tokens=report.prompt_tokens,
            cache_read_tokens=report.cache_read_tokens,
            cache_write_tokens=report.cache_write_tokens,
            cost=report.cost,
            vs_none=report.cost / base if base else 0.0,
            vs_last=report.cost / last if last else 0.0,
        )
        for name in STRATEGIES
        if (report := reports.get(name)) is not None
    ]


def priced(
    recordings: Mapping[str, Recording], rules: CacheRules, counter: TokenCounter
) -> dict[str, SimulationReport]:
    """Each layout's requests priced under `rules`; (a) is (b) with no caching."""
    reports = {"none": price(recordings["last"], NO_CACHE, counter)}
    reports.update({s: price(recordings[s], rules, counter) for s in REPLAYED})
    return reports


def goal_misses(rows: list[StrategyRow], rules: CacheRules, session: str) -> list[str]:
    """The goals (d) misses for this rule set and session shape, in words (issue 21's):
    at most 1.00x of the best simple layout everywhere, 0.85x of it under explicit
    breakpoints, 0.6x of (b) for the long session under explicit breakpoints, 0.25x of no
    caching where reads cost 0.1x, never more than no caching in the long pauses."""
    by = {r.strategy: r for r in rows}
    acdc, best = by["acdc"], min(by["last"].cost, by["seed"].cost)
    explicit = rules.kind == "explicit"
    goal = GOAL_VS_BEST if explicit else 1.0
    misses = []
    if best and acdc.cost > goal * best:
        misses.append(f"{acdc.cost / best:.2f}x best simple (goal <= {goal:.2f})")
    if explicit and session == LONG_SESSION and acdc.vs_last > GOAL_LONG_VS_LAST:
        misses.append(f"{acdc.vs_last:.2f}x (b) (goal <= {GOAL_LONG_VS_LAST})")
    if rules.read_multiplier <= 0.1 + 1e-9 and acdc.vs_none > GOAL_VS_NONE:
        misses.append(f"{acdc.vs_none:.2f}x no caching (goal <= {GOAL_VS_NONE})")
    if session == PAUSE_SESSION and acdc.vs_none > 1.0:
        misses.append(f"{acdc.vs_none:.2f}x no caching (goal <= 1.0)")
    return misses


def shape_markdown(title: str, results: Sequence[tuple[str, list[StrategyRow], list[str]]]) -> str:
    """One table per session shape: a row per rule set, each layout's cost against (a)."""
    header = ("rule set", *(LABELS[s] for s in STRATEGIES), "(d) vs best simple", "goals")
    cells = []
    for label, rows, misses in results:
        by = {r.strategy: r for r in rows}
        best = min(by["last"].cost, by["seed"].cost)
        cells.append(
            (
                label,
                f"{by['none'].cost:,.0f}",
                *(f"{by[s].vs_none:.2f}x" for s in REPLAYED),
                f"{by['acdc'].cost / best:.2f}x" if best else "-",
                "met" if not misses else "NOT met: " + "; ".join(misses),
            )
        )
    return "\n".join([f"### {title}", "", markdown_table(header, cells, "lrrrrrl")])


def rows_as_data(rows: list[StrategyRow]) -> list[dict[str, Any]]:
    return [
        {
            "strategy": r.strategy,
            "label": LABELS[r.strategy],
            "prompt_tokens": r.prompt_tokens,
            "cache_read_tokens": r.cache_read_tokens,
            "cache_write_tokens": r.cache_write_tokens,
            "cache_read_share": round(r.cache_read_share, 4),
            "cost": round(r.cost, 1),
            "vs_none": round(r.vs_none, 4),
            "vs_last": round(r.vs_last, 4),
        }
        for r in rows
    ]
