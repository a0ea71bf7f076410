"""Context quality score (seed 003): a heuristic 0..1 per turn, for the HUD.

Parts, each 0..1 where 1 is good: `headroom` (how far the prompt is from the input window),
`summaries` (compactions per turn -- a summary of a summary loses detail; seed 003's session
ratio with its direction fixed) and `grounding` (mean relevance of the related context offered
this turn). A part that cannot be measured is left out and the others share its weight. They
combine as a weighted geometric mean, so one bad part is enough to pull the score down (an
arithmetic mean would hide a full window behind good grounding); below the threshold the part
that cost the most is named with a fix. Invariants: pure, never raises, odd inputs clamped.
Non-goals: LLM-judged coherence, acting on the suggestion.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

HEADROOM, SUMMARIES, GROUNDING = "headroom", "summaries", "grounding"
# What the HUD offers for each weak part ("grounding" opens the settings toggle). A full
# window whose history is the smaller part asks for "files" (fewer or outlined) instead.
ACTIONS = MappingProxyType({HEADROOM: "compact", SUMMARIES: "rollback", GROUNDING: "grounding"})
FILES = "files"


@dataclass(frozen=True)
class QualityConfig:
    """Weights are relative (they need not sum to 1); a negative weight counts as 0.

    Headroom weighs most because a full window is both the likeliest cause of poor answers
    and the one the user can fix at once (compact). `max_summaries_per_turn` is the rate of
    compactions at which the summaries part reaches 0: by default one every other turn.
    With the defaults and grounding off, the suggestion appears once the prompt passes about
    two thirds of the window, or once there are more than about 4 summaries per 10 turns.
    """

    headroom_weight: float = 0.5
    summaries_weight: float = 0.3
    grounding_weight: float = 0.2
    threshold: float = 0.5
    max_summaries_per_turn: float = 0.5


@dataclass(frozen=True)
class QualityScore:
    value: float
    parts: dict[str, float] = field(default_factory=dict)
    suggestion: str | None = None
    # "compact", "rollback" or "grounding" when there is a suggestion: what the HUD offers.
    action: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "parts": dict(self.parts),
            "suggestion": self.suggestion,
            "action": self.action,
        }


def score_quality(
    *,
    prompt_tokens: float,
    window_tokens: float,
    turns: float,
    compactions: float,
    grounding_relevance: float | None = None,
    config: QualityConfig | None = None,
    history_tokens: float | None = None,
) -> QualityScore:
    """The quality score of one turn.

    `prompt_tokens`: the assembled request's estimate. `window_tokens`: what it may grow to;
    pass `ModelFacts.input_budget` (the window minus the output reserve) so that a prompt at
    the hard cap scores 0; 0 or less means unknown and leaves headroom out. `turns`: user
    turns of the session so far; `compactions`: summaries in the current working state
    (undone or rolled-back ones excluded). `grounding_relevance`: the mean relevance, 0..1,
    of the related context offered this turn (clamped); None when grounding is off or
    offered nothing, so that a turn with nothing to ground on is not counted as bad.
    `history_tokens`: the history's part of the prompt; when given, a full window is put
    down to the history or to the rest (files, map, system prompt), whichever is larger.
    """
    config = config or QualityConfig()
    parts: dict[str, float] = {}
    headroom = headroom_part(prompt_tokens, window_tokens)
    if headroom is not None:
        parts[HEADROOM] = headroom
    parts[SUMMARIES] = summaries_part(turns, compactions, config.max_summaries_per_turn)
    if grounding_relevance is not None:
        parts[GROUNDING] = _unit(grounding_relevance)
    weights = _weights(parts, config)
    value = _unit(math.prod(part ** weights[name] for name, part in parts.items()))
    if value >= _unit(config.threshold):
        return QualityScore(value, parts)
    weakest = max(parts, key=lambda name: _cost(parts[name], weights[name]))
    if weakest == HEADROOM and history_tokens is not None:
        return _full_window(value, parts, prompt_tokens, window_tokens, history_tokens)
    suggestion = _suggestion(weakest, prompt_tokens, window_tokens, turns, compactions)
    return QualityScore(value, parts, suggestion, ACTIONS[weakest])


def _full_window(
    value: float, parts: dict[str, float], prompt: float, window: float, history: float
) -> QualityScore:
    """The full window's advice, naming its cause: the history (compact it) or the files
    and the rest of the prompt (untick or outline files); compacting a short history would
    free next to nothing."""
    prompt, history = _number(prompt), min(_number(history), _number(prompt))
    used = round(100 * _number(prompt) / _number(window)) if _number(window) else 0
    rest = prompt - history
    if history >= rest:
        text = (
            f"The prompt fills {used}% of the model's input window, mostly history "
            f"({history:,.0f} tokens): compact the history."
        )
        return QualityScore(value, parts, text, ACTIONS[HEADROOM])
    text = (
        f"The prompt fills {used}% of the model's input window, mostly files and the "
        f"rest of the context ({rest:,.0f} tokens; the history is {history:,.0f}): untick "
        "files or send them as outlines."
    )
    return QualityScore(value, parts, text, FILES)


def headroom_part(prompt_tokens: float, window_tokens: float) -> float | None:
    """1 for an empty prompt, falling linearly to 0 at the window; None for no window."""
    window = _number(window_tokens)
    if window <= 0:
        return None
    return _unit(1.0 - _number(prompt_tokens) / window)


def summaries_part(turns: float, compactions: float, max_per_turn: float = 0.5) -> float:
    """1 with no summaries, falling linearly to 0 at `max_per_turn` summaries per turn
    (turns count as at least 1, as in the seed)."""
    ratio = _number(compactions) / max(1.0, _number(turns))
    limit = _number(max_per_turn)
    if limit <= 0:
        return 1.0 if ratio == 0 else 0.0
    return _unit(1.0 - ratio / limit)


def _weights(parts: dict[str, float], config: QualityConfig) -> dict[str, float]:
    """Normalized weights of the parts present; equal shares when all weights are 0."""
    raw = {
        HEADROOM: config.headroom_weight,
        SUMMARIES: config.summaries_weight,
        GROUNDING: config.grounding_weight,
    }
    chosen = {name: _number(raw[name]) for name in parts}
    total = sum(chosen.values())
    if total <= 0:
        return {name: 1.0 / len(parts) for name in parts}
    return {name: weight / total for name, weight in chosen.items()}


def _cost(part: float, weight: float) -> float:
    """How much a part lowers the log of the score."""
    if weight <= 0:
        return 0.0
    return math.inf if part <= 0 else -weight * math.log(part)


def _suggestion(
    weakest: str, prompt_tokens: float, window_tokens: float, turns: float, compactions: float
) -> str:
    if weakest == HEADROOM:
        used = round(100 * _unit(_number(prompt_tokens) / _number(window_tokens)))
        return f"The prompt fills {used}% of the model's input window: compact the history."
    if weakest == SUMMARIES:
        count, over = int(_number(compactions)), int(max(1.0, _number(turns)))
        return (
            f"The history was summarized {count} times in {over} turns and may have lost "
            "detail: roll back to a checkpoint."
        )
    return (
        "The related context offered this turn is barely relevant: turn grounding off or "
        "pin the notes that matter."
    )


def _is_number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return not math.isnan(value)


def _number(value: Any) -> float:
    """A finite number >= 0: negatives, NaN and non-numbers become 0, infinity stays large."""
    if not _is_number(value):
        return 0.0
    return min(max(0.0, float(value)), 1e300)


def _unit(value: Any) -> float:
    return min(1.0, _number(value))
