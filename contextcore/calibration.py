"""Token counts the provider agrees with: a per-model correction of acdc's estimates.

acdc counts with tiktoken, which is not every provider's tokenizer (Claude's is not). Each
stored request holds acdc's estimate and the prompt tokens the provider reported; the
correction factor is the largest reported/estimated ratio among the model's most recent
`WINDOW` requests, times `1 + MARGIN`, so the budget holds for the worst recent request
and a little more. With no usable sample the factor is 1 (no evidence to correct with).
`ModelFacts.token_factor` carries it: budgets, shedding and the HUD then compare acdc's
estimates with a window shrunk (or grown) by it, and `shift` says by how much the budget
moved, for the person who sees it move. Pure: the caller reads the samples.
"""

from __future__ import annotations

from collections.abc import Iterable

WINDOW = 10  # most recent requests weighed
MARGIN = 0.05
MIN_ESTIMATE = 256  # tiny requests are mostly framing; their ratio says little
MIN_FACTOR, MAX_FACTOR = 0.5, 2.0  # beyond these the samples are wrong, not the counter


def correction_factor(samples: Iterable[tuple[int, int]], margin: float = MARGIN) -> float:
    """The factor from (estimated, reported) prompt tokens, most recent first."""
    ratios = [
        reported / estimated
        for estimated, reported in samples
        if estimated >= MIN_ESTIMATE and reported > 0
    ][:WINDOW]
    if not ratios:
        return 1.0
    return min(MAX_FACTOR, max(MIN_FACTOR, max(ratios) * (1.0 + margin)))


def shift(factor: float, budget: int, uncorrected: int) -> dict[str, float | int] | None:
    """How calibration moved the budget: the `factor`, the `budget` shown, the budget
    without it (`uncorrected`) and the difference; None when it did not move it."""
    if factor == 1.0 or budget == uncorrected:
        return None
    return {
        "factor": round(factor, 2),
        "budget": budget,
        "uncorrected": uncorrected,
        "delta": budget - uncorrected,
    }
