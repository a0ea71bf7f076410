"""Which cache lifetime to write, per request, from the session's rhythm.

Under explicit breakpoints every written token costs a premium now (0.25x for 5 minutes,
1x for an hour at Anthropic's prices) and saves `1 - read` on each later request that
reads it before it expires. A cached prefix survives until the first gap longer than its
lifetime, so with `p` the chance a gap stays within it, the expected number of reads is
`p / (1 - p)` (capped at `HORIZON` requests). The policy writes the lifetime with the
largest expected saving per token, or nothing when neither pays. `p` is taken from the
session's observed gaps between requests, with a prior of `PRIOR_GAPS` (a conversation
usually continues within a minute). Automatic and no-cache rules have nothing to choose.
Pure: no clock, no state; the caller passes the gaps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from contextcore.prompt.cacherules import CacheRules

HORIZON = 10  # requests ahead a saving is counted for: sessions end
PRIOR_GAPS = (60.0, 60.0)
RHYTHM_LENGTH = 30  # most recent gaps the policy weighs
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


def choose_write(rules: CacheRules, gaps: Sequence[float]) -> CacheChoice:
    """The lifetime to write this request's new prefix with (see the module docstring)."""
    if rules.kind != "explicit":
        return CacheChoice(FIVE_MINUTES, rules.ttl, 0.0)
    best = CacheChoice(OFF, 0.0, 0.0)
    options = [(FIVE_MINUTES, rules.ttl, rules.write_multiplier)]
    if rules.long_ttl:
        options.append((ONE_HOUR, rules.long_ttl, rules.long_write_multiplier))
    for label, lifetime, multiplier in options:
        reads = expected_reads(survival(gaps, lifetime))
        saving = (1.0 - rules.read_multiplier) * reads - (multiplier - 1.0)
        if saving > best.saving:
            best = CacheChoice(label, lifetime, saving)
    return best
