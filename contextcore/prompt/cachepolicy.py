"""Which cache lifetime to write, per request, from the session's rhythm.

Under explicit breakpoints every written token costs a premium now (0.25x for 5 minutes,
1x for an hour at Anthropic's prices) and saves `1 - read` on each later request that
reads it before it expires. A cached prefix survives until the first gap longer than its
lifetime, so with `p` the chance a gap stays within it, the expected number of reads is
`p / (1 - p)` (capped at `HORIZON` requests). The policy writes the lifetime with the
largest expected saving per token, or nothing when neither pays. `p` is taken from the
session's observed gaps between requests, with a prior of `PRIOR_GAPS` (a conversation
usually continues within a minute). Automatic and no-cache rules have nothing to choose.
Keep-alive: under explicit breakpoints a request that only reads the cached prefix renews
its lifetime, so while the person is away a refresh just before expiry (`refresh_times`)
costs one read instead of the rewrite their return would cost. How many refreshes follow a
request is what the observed rhythm says saves most, and never more in one gap than a
rewrite would have cost (rent, then buy). `choose_write(..., keep_alive=True)` prices the
lifetimes with those refreshes and rewrites, so a session keeps to one lifetime.
Pure: no clock, no state; the caller passes the gaps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from contextcore.prompt.cacherules import CacheRules

HORIZON = 10  # requests ahead a saving is counted for: sessions end
PRIOR_GAPS = (60.0, 60.0)
RHYTHM_LENGTH = 30  # most recent gaps the policy weighs
REFRESH_MARGIN = 30.0  # seconds before expiry a keep-alive refresh is sent
# What the refresh plan assumes of a person away longer than a lifetime before the session
# shows its own: as likely back within 10 or 20 minutes as gone for an hour and a half. It
# costs a steady session nothing (no refresh goes out before a gap passes 4.5 minutes).
REFRESH_PRIOR_GAPS = (600.0, 1200.0, 5400.0)
OFF, FIVE_MINUTES, ONE_HOUR = "off", "5m", "1h"


@dataclass(frozen=True)
class CacheChoice:
    write: str  # OFF, FIVE_MINUTES or ONE_HOUR
    seconds: float  # the written prefix's lifetime (0 when nothing is written)
    saving: float  # expected saving per written token, in input-token units


def survival(gaps: Sequence[float], lifetime: float) -> float:
    """The chance the next gap is within `lifetime`, from the prior and the observed gaps."""
    seen = (*PRIOR_GAPS, *gaps[-RHYTHM_LENGTH:])
    within = sum(1 for gap in seen if gap <= lifetime)
    return (within + 0.5) / (len(seen) + 1)


def expected_reads(p: float) -> float:
    return min(float(HORIZON), p / (1.0 - p))


def refresh_times(rules: CacheRules, gaps: Sequence[float], lifetime: float) -> tuple[float, ...]:
    """Seconds after a request at which keep-alive refreshes go out while nobody writes,
    each just before the prefix would expire. How many: the number with the largest
    expected saving over the observed gaps (the prior included, and one more gap that
    never ends, which pays for every refresh): a gap that ends after the lifetime but
    before the last refresh's does not pay a rewrite, and every refresh sent before a
    gap ends costs one read. Never more than a rewrite would cost in reads."""
    step = lifetime - REFRESH_MARGIN
    if rules.kind != "explicit" or step <= 0 or rules.read_multiplier <= 0:
        return ()
    seen = (*PRIOR_GAPS, *REFRESH_PRIOR_GAPS, *gaps[-RHYTHM_LENGTH:])
    rewrite = rules.write_multiplier - rules.read_multiplier
    most = int(rewrite / rules.read_multiplier)
    best, best_value = 0, 0.0
    for count in range(1, most + 1):
        last = step * count
        covered = sum(1 for gap in seen if lifetime < gap <= last + lifetime)
        paid = count + sum(min(count, int(gap // step)) for gap in seen)
        value = covered * rewrite - paid * rules.read_multiplier
        if value > best_value:
            best, best_value = count, value
    return tuple(step * (i + 1) for i in range(best))


def choose_write(
    rules: CacheRules, gaps: Sequence[float], *, keep_alive: bool = False
) -> CacheChoice:
    """The lifetime to write this request's new prefix with (see the module docstring)."""
    if rules.kind != "explicit":
        return CacheChoice(FIVE_MINUTES, rules.ttl, 0.0)
    options = [(FIVE_MINUTES, rules.ttl, rules.write_multiplier)]
    if rules.long_ttl:
        options.append((ONE_HOUR, rules.long_ttl, rules.long_write_multiplier))
    if keep_alive:
        return _with_refreshes(rules, gaps, options)
    best = CacheChoice(OFF, 0.0, 0.0)
    for label, lifetime, multiplier in options:
        reads = expected_reads(survival(gaps, lifetime))
        saving = (1.0 - rules.read_multiplier) * reads - (multiplier - 1.0)
        if saving > best.saving:
            best = CacheChoice(label, lifetime, saving)
    return best


def _with_refreshes(
    rules: CacheRules, gaps: Sequence[float], options: Sequence[tuple[str, float, float]]
) -> CacheChoice:
    """With keep-alive refreshes a lost prefix is not lost for good: it is written again
    at the same lifetime's price. So a token costs its write, then in each of the next
    `HORIZON` gaps the refreshes sent during it and either a read (back before the last
    refresh's lifetime ran out) or a rewrite; unwritten, it costs 1 every request. The
    lifetime with the lowest cost wins, which keeps a session on one lifetime instead of
    writing whole prefixes at the long price and their tails at the short one."""
    seen = (*PRIOR_GAPS, *gaps[-RHYTHM_LENGTH:])
    read = rules.read_multiplier
    uncached = 1.0 + HORIZON
    best = CacheChoice(OFF, 0.0, 0.0)
    for label, lifetime, multiplier in options:
        times = refresh_times(rules, gaps, lifetime)
        reach = times[-1] + lifetime if times else lifetime
        per_gap = sum(
            read * sum(1 for t in times if t < gap) + (read if gap <= reach else multiplier)
            for gap in seen
        ) / len(seen)
        saving = (uncached - multiplier - HORIZON * per_gap) / (1.0 + HORIZON)
        if saving > best.saving:
            best = CacheChoice(label, lifetime, saving)
    return best
