from __future__ import annotations

import math

import pytest

from contextcore.quality import (
    QualityConfig,
    QualityScore,
    headroom_part,
    score_quality,
    summaries_part,
)


def score(**overrides) -> QualityScore:
    values = {"prompt_tokens": 0, "window_tokens": 1000, "turns": 10, "compactions": 0}
    return score_quality(**{**values, **overrides})


def test_an_empty_prompt_without_summaries_scores_one_with_no_suggestion():
    result = score()
    assert result.value == 1.0
    assert result.parts == {"headroom": 1.0, "summaries": 1.0}
    assert result.suggestion is None and result.action is None


def test_headroom_falls_linearly_to_zero_at_the_window():
    assert headroom_part(0, 1000) == 1.0
    assert headroom_part(250, 1000) == 0.75
    assert headroom_part(1000, 1000) == 0.0
    assert headroom_part(5000, 1000) == 0.0


def test_a_window_of_zero_or_less_leaves_headroom_out_and_its_weight_to_the_rest():
    assert headroom_part(100, 0) is None
    assert headroom_part(100, -5) is None
    result = score(prompt_tokens=100, window_tokens=0, turns=10, compactions=1)
    assert "headroom" not in result.parts
    assert result.value == pytest.approx(summaries_part(10, 1))


def test_summaries_part_falls_with_summaries_per_turn():
    assert summaries_part(10, 0) == 1.0
    assert summaries_part(10, 1) == pytest.approx(0.8)
    assert summaries_part(10, 5) == 0.0
    assert summaries_part(2, 7) == 0.0


def test_zero_turns_count_as_one_so_summaries_without_turns_still_count():
    assert summaries_part(0, 0) == 1.0
    assert summaries_part(0, 1) == 0.0
    assert summaries_part(0, 1, max_per_turn=2) == 0.5
    assert summaries_part(-3, 0) == 1.0


def test_a_limit_of_zero_summaries_per_turn_makes_any_summary_score_zero():
    assert summaries_part(10, 0, max_per_turn=0) == 1.0
    assert summaries_part(10, 1, max_per_turn=0) == 0.0


def test_grounding_off_is_left_out_and_grounding_on_is_weighted_in():
    off = score(prompt_tokens=500)
    on = score(prompt_tokens=500, grounding_relevance=0.25)
    assert "grounding" not in off.parts
    assert on.parts["grounding"] == 0.25
    # Defaults 0.5/0.3/0.2: without grounding, headroom has 0.5/0.8 of the weight.
    assert off.value == pytest.approx(0.5**0.625)
    assert on.value == pytest.approx(0.5**0.5 * 0.25**0.2)


def test_one_part_at_zero_brings_the_whole_score_to_zero():
    assert score(prompt_tokens=300, grounding_relevance=0.0).value == 0.0
    assert score(prompt_tokens=1000, grounding_relevance=1.0).value == 0.0


def test_weights_are_configurable_and_relative():
    config = QualityConfig(headroom_weight=2, summaries_weight=2, grounding_weight=0)
    result = score(prompt_tokens=750, turns=10, compactions=0, config=config)
    assert result.value == pytest.approx(0.25**0.5)
    # A part with weight 0 counts for nothing, even at 0.
    zero_grounding = score(prompt_tokens=750, grounding_relevance=0.0, config=config)
    assert zero_grounding.value == result.value


def test_negative_weights_count_as_zero_and_all_zero_weights_share_equally():
    negative = QualityConfig(headroom_weight=-1, summaries_weight=1, grounding_weight=0)
    assert score(prompt_tokens=1000, config=negative).value == 1.0
    zero = QualityConfig(headroom_weight=0, summaries_weight=0, grounding_weight=0)
    assert score(prompt_tokens=750, config=zero).value == pytest.approx(0.25**0.5)


def test_the_defaults_suggest_past_two_thirds_of_the_window_or_four_summaries_in_ten():
    assert score(prompt_tokens=650).suggestion is None
    assert score(prompt_tokens=700).action == "compact"
    assert score(turns=10, compactions=4).suggestion is None
    assert score(turns=20, compactions=9).action == "rollback"


def test_a_nearly_full_window_suggests_compacting():
    result = score(prompt_tokens=950, grounding_relevance=0.9)
    assert result.value < 0.5
    assert result.action == "compact"
    assert "compact the history" in result.suggestion
    assert "95%" in result.suggestion


def test_piled_up_summaries_suggest_a_rollback():
    result = score(prompt_tokens=300, turns=4, compactions=3)
    assert result.value < 0.5
    assert result.action == "rollback"
    assert "roll back to a checkpoint" in result.suggestion
    assert "3 times in 4 turns" in result.suggestion


def test_irrelevant_grounding_is_named_when_it_costs_the_most():
    config = QualityConfig(headroom_weight=0.2, summaries_weight=0.2, grounding_weight=0.6)
    result = score(prompt_tokens=200, grounding_relevance=0.05, config=config)
    assert result.action == "grounding"
    assert "grounding" in result.suggestion


def test_the_suggestion_starts_strictly_below_the_threshold():
    value = score(prompt_tokens=700).value
    at = score(prompt_tokens=700, config=QualityConfig(threshold=value))
    assert at.suggestion is None
    above = score(prompt_tokens=700, config=QualityConfig(threshold=math.nextafter(value, 1)))
    assert above.action == "compact"


def test_a_threshold_of_zero_never_suggests_and_one_suggests_unless_perfect():
    assert score(prompt_tokens=1000, config=QualityConfig(threshold=0)).suggestion is None
    assert score(prompt_tokens=1, config=QualityConfig(threshold=1)).suggestion is not None
    assert score(config=QualityConfig(threshold=1)).suggestion is None
    assert score(prompt_tokens=999, config=QualityConfig(threshold=7)).suggestion is not None


@pytest.mark.parametrize(
    "odd",
    [
        {"prompt_tokens": -50},
        {"prompt_tokens": math.nan},
        {"prompt_tokens": math.inf},
        {"window_tokens": math.inf},
        {"window_tokens": math.nan},
        {"turns": -1, "compactions": -4},
        {"compactions": math.inf},
        {"grounding_relevance": 7},
        {"grounding_relevance": -2},
        {"grounding_relevance": math.nan},
        {"prompt_tokens": "many", "turns": None},
        {"config": QualityConfig(threshold=math.nan, max_summaries_per_turn=-1)},
    ],
)
def test_odd_inputs_never_raise_and_stay_within_zero_and_one(odd):
    result = score(**odd)
    assert 0.0 <= result.value <= 1.0
    assert all(0.0 <= part <= 1.0 for part in result.parts.values())


def test_odd_values_are_clamped_to_what_they_must_mean():
    assert score(prompt_tokens=-50).parts["headroom"] == 1.0
    assert score(prompt_tokens=math.inf).parts["headroom"] == 0.0
    assert score(grounding_relevance=7).parts["grounding"] == 1.0
    assert score(grounding_relevance=-2).parts["grounding"] == 0.0


def test_as_dict_is_what_the_hud_renders():
    result = score(prompt_tokens=990)
    assert result.as_dict() == {
        "value": result.value,
        "parts": result.parts,
        "suggestion": result.suggestion,
        "action": "compact",
    }


def test_a_full_window_of_files_asks_for_fewer_files_not_compaction():
    result = score(prompt_tokens=1410, history_tokens=82)
    assert result.action == "files"
    assert "mostly files" in result.suggestion and "compact" not in result.suggestion
    assert "141%" in result.suggestion and "the history is 82" in result.suggestion


def test_a_full_window_of_history_still_asks_to_compact_it():
    result = score(prompt_tokens=950, history_tokens=700)
    assert result.action == "compact"
    assert "mostly history (700 tokens): compact the history." in result.suggestion
