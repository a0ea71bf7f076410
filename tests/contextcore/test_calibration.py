from __future__ import annotations

import math
from dataclasses import replace

import pytest

from contextcore.calibration import MARGIN, WINDOW, correction_factor
from contextcore.models import ModelFacts

STEADY = 1.15 * (1 + MARGIN)


def test_no_evidence_means_no_correction():
    assert correction_factor([]) == 1.0
    assert correction_factor([(100, 200)]) == 1.0  # too small to say anything


def test_the_factor_covers_the_worst_recent_request_with_a_margin():
    samples = [(10_000, 11_500), (10_000, 11_000), (10_000, 11_200)]
    assert correction_factor(samples) == pytest.approx(STEADY)


def test_only_the_most_recent_requests_count():
    # The provider's counting changed WINDOW requests ago: the old ratio is forgotten.
    samples = [(10_000, 10_000)] * WINDOW + [(10_000, 15_000)] * 5
    assert correction_factor(samples) == pytest.approx(1 + MARGIN)


def test_a_factor_shrinks_the_budget_and_the_window_acdc_measures_against():
    facts = ModelFacts(name="m", max_input_tokens=20_000, max_output_tokens=2_000)
    corrected = replace(facts, token_factor=1.25)
    assert corrected.input_budget == int(facts.input_budget / 1.25)
    assert corrected.estimate_window == 16_000


def _provider_count(counter, messages) -> int:
    """A provider whose tokenizer counts 15% more than acdc's."""
    return math.ceil(1.15 * counter.count(messages))


def test_calibration_converges_on_a_provider_counting_15_percent_more_and_the_budget_holds(
    make_manager, counter, tmp_path
):
    facts = ModelFacts(
        name="anthropic/claude-sonnet-4-5",
        max_input_tokens=20_000,
        max_output_tokens=2_000,
        supports_prompt_caching=True,
    )
    for n in range(4):
        (tmp_path / f"part_{n}.py").write_text(f"value_{n} = compute({n})\n" * 700)
    manager = make_manager(repo_root=tmp_path, facts_=facts)
    for n in range(4):
        assert manager.file_context.add_file(f"part_{n}.py").ok
    samples: list[tuple[int, int]] = []
    reported, factors = [], []
    for turn in range(6):
        manager.facts = replace(facts, token_factor=correction_factor(samples))
        factors.append(manager.facts.token_factor)
        prepared = manager.prepare_request(f"question {turn}")
        assert prepared.estimated_tokens <= manager.facts.input_budget
        reported.append(_provider_count(counter, prepared.messages))
        samples.insert(0, (prepared.estimated_tokens, reported[-1]))
        manager.record_exchange(f"question {turn}", "an answer")
    # Uncorrected, the first request overruns the provider's budget; corrected, none does.
    assert reported[0] > facts.input_budget
    assert all(count <= facts.input_budget for count in reported[1:])
    assert factors[0] == 1.0
    assert all(f == pytest.approx(STEADY, rel=0.01) for f in factors[1:])
