"""Where the cache benchmark's costs come from: the figures behind its "why" paragraphs.

`side_split` divides a session's priced requests into chat and side requests (topic
detector, summarizer): what the one-breakpoint layout's chat requests alone cost against
its total says how far any layout sending the same conversation could get below it.
`lifetime_experiments` replays the scripted sessions through `ContextManager` under
Anthropic's rules with the cache lifetime forced (5 minutes only, 1 hour only) and with a
rhythm prior that expects pauses, against the policy as it is, and as it is with keep-alive
refreshes sent while the person is away: what-ifs, done by swapping the policy function
the request builder calls for the length of one replay. `refresh_split` counts the
refreshes of a replay through the pipeline and what they cost. Not a test: nothing here
asserts.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager

from bench.cache.pricing import Recording, price
from bench.report import markdown_table
from bench.sessions import Session
from contextcore.prompt import cachepolicy, request
from contextcore.prompt.cacherules import FIVE_MINUTES, NO_CACHE, CacheRules
from contextcore.prompt.cachesim import SimulationReport
from contextcore.tokens import TokenCounter

PAUSE_PRIOR = (60.0, 60.0, 600.0)  # the two 1-minute gaps and a 10-minute one


def side_split(
    recordings: Mapping[str, Recording], reports: Mapping[str, SimulationReport]
) -> dict[str, float]:
    """Shares of (a) for (b)'s and acdc's chat and side requests, the share of (b)'s
    total its chat requests make, and the prompt tokens each leaves uncached in chat."""
    base = reports["none"].cost
    found: dict[str, float] = {}
    for name in ("last", "acdc"):
        sent, costs = recordings[name].sent, reports[name].requests
        chat = [c for s, c in zip(sent, costs, strict=True) if not s.side]
        side = [c for s, c in zip(sent, costs, strict=True) if s.side]
        found[f"{name}_chat"] = sum(c.cost for c in chat) / base
        found[f"{name}_side"] = sum(c.cost for c in side) / base
        found[f"{name}_uncached_chat"] = sum(c.prompt_tokens - c.cache_read_tokens for c in chat)
    found["last_chat_of_total"] = found["last_chat"] / (found["last_chat"] + found["last_side"])
    return found


def refresh_split(acdc: Recording, reports: Mapping[str, SimulationReport]) -> dict[str, float]:
    """How many keep-alive refreshes acdc sent, what they cost (a share of (a)), and how
    many of its chat requests came back after more than five minutes."""
    costs = reports["acdc"].requests
    sent = [(s, c) for s, c in zip(acdc.sent, costs, strict=True) if s.refresh]
    chat = [s for s in acdc.sent if not s.side and not s.refresh]
    late = sum(1 for a, b in itertools.pairwise(chat) if b.at - a.at > FIVE_MINUTES)
    return {
        "count": len(sent),
        "cost": sum(c.cost for _, c in sent) / reports["none"].cost,
        "returns": late,
    }


def refresh_markdown(rows: Sequence[tuple[str, dict[str, float]]]) -> str:
    header = ("rule set", "refreshes", "their cost, of (a)", "returns after 5+ minutes")
    cells = [
        (label, f"{r['count']:.0f}", f"{r['cost']:.3f}", f"{r['returns']:.0f}") for label, r in rows
    ]
    return markdown_table(header, cells, "lrrr")


def split_markdown(rows: Sequence[tuple[str, dict[str, float]]]) -> str:
    header = (
        "rule set",
        "(b) chat, of (b)'s total",
        "(b) side, of (a)",
        "(d) side, of (a)",
        "uncached chat tokens (b) / (d)",
    )
    cells = [
        (
            label,
            f"{s['last_chat_of_total']:.2f}x",
            f"{s['last_side']:.3f}",
            f"{s['acdc_side']:.3f}",
            f"{s['last_uncached_chat']:,.0f} / {s['acdc_uncached_chat']:,.0f}",
        )
        for label, s in rows
    ]
    return markdown_table(header, cells, "lrrrr")


@contextmanager
def _policy(choose: Callable) -> Iterator[None]:
    saved = request.choose_write
    request.choose_write = choose
    try:
        yield
    finally:
        request.choose_write = saved


def _forced(label: str) -> Callable:
    def choose(rules: CacheRules, gaps: Sequence[float], **_: object) -> cachepolicy.CacheChoice:
        seconds = rules.lifetime(label)[0]
        return cachepolicy.CacheChoice(label, seconds, 0.0)

    return choose


def _with_prior(
    rules: CacheRules, gaps: Sequence[float], keep_alive: bool = False
) -> cachepolicy.CacheChoice:
    # The policy as it is, shown the pause-expecting prior ahead of the observed gaps.
    shown = (*PAUSE_PRIOR[len(cachepolicy.PRIOR_GAPS) :], *gaps)
    return cachepolicy.choose_write(rules, shown, keep_alive=keep_alive)


def lifetime_experiments(
    sessions: Sequence[Session],
    replay: Callable[..., Recording],
    rules: CacheRules,
    counter: TokenCounter,
) -> str:
    """acdc's cost (a share of (a)) per session under `rules`: as chosen, with 5-minute
    writes only, with 1-hour writes only, with the pause-expecting prior (all without
    refreshes), and as chosen with keep-alive refreshes (`replay(..., keep_alive=True)`)."""
    variants = (
        ("as chosen", request.choose_write, False),
        ("5 min only", _forced(cachepolicy.FIVE_MINUTES), False),
        ("1 h only", _forced(cachepolicy.ONE_HOUR), False),
        ("prior expecting pauses", _with_prior, False),
        ("as chosen, with refreshes", request.choose_write, True),
    )
    cells = []
    for session in sessions:
        base = price(replay(session, "last"), NO_CACHE, counter).cost
        row = [session.name]
        for _, choose, keep_alive in variants:
            with _policy(choose):
                cost = price(replay(session, "acdc", keep_alive=keep_alive), rules, counter).cost
            row.append(f"{cost / base:.3f}x")
        cells.append(tuple(row))
    header = ("session", *(label for label, _, _ in variants))
    return markdown_table(header, cells, "lrrrrr")
