from __future__ import annotations

import pytest

from chat.session.hud import compaction_status, cost_of, level_for, sparkline_points, unbilled
from contextcore.config import ContextConfig
from contextcore.llm import Usage
from contextcore.manager import ContextManager
from contextcore.models import ModelFacts
from contextcore.tokens import TokenCounter


@pytest.mark.parametrize(
    ("percent", "level"),
    [(0, "green"), (75, "green"), (75.1, "amber"), (90, "amber"), (90.1, "red"), (150, "red")],
)
def test_the_budget_colour_follows_the_thresholds(percent, level):
    assert level_for(percent) == level


def test_cost_prices_cache_reads_and_writes_separately():
    facts = ModelFacts(
        name="m",
        input_cost_per_token=3e-6,
        output_cost_per_token=15e-6,
        cache_read_cost_per_token=0.3e-6,
        cache_write_cost_per_token=3.75e-6,
    )
    usage = Usage(
        prompt_tokens=1000, completion_tokens=100, cache_read_tokens=600, cache_write_tokens=300
    )
    expected = 100 * 3e-6 + 600 * 0.3e-6 + 300 * 3.75e-6 + 100 * 15e-6
    assert cost_of(usage, facts) == pytest.approx(expected)


def test_cost_is_unknown_without_prices():
    assert cost_of(Usage(prompt_tokens=10), ModelFacts(name="x")) is None


def test_the_sparkline_spans_the_box_and_needs_two_points():
    assert sparkline_points([0.5]) == ""
    assert sparkline_points([0.0, 1.0], width=100, height=20) == "0.0,20.0 100.0,0.0"


def test_a_model_without_a_bill_says_so_instead_of_costing_nothing():
    assert unbilled(ModelFacts(name="acdc/dry-run")) == "no cost (dry run)"
    assert unbilled(ModelFacts(name="acdc/fake")) == "no cost (offline model)"
    assert unbilled(ModelFacts(name="someone/new-model")).startswith("cost unknown")
    assert unbilled(ModelFacts(name="m", input_cost_per_token=3e-6)) == ""


@pytest.mark.parametrize("enabled", [True, False])
def test_the_compaction_status_says_on_or_off_the_trigger_and_the_share_reached(enabled):
    config = ContextConfig(compaction_enabled=enabled, compaction_trigger_tokens=200)
    facts = ModelFacts(name="m", max_input_tokens=100_000)
    manager = ContextManager(facts, TokenCounter("cl100k_base"), config=config)
    manager.set_history([{"role": "user", "content": "word " * 40}])
    status = compaction_status(manager)
    assert status["compaction_on"] is enabled and status["compaction_trigger"] == 200
    assert 0 < status["history_tokens"] < 200
    assert status["history_percent"] == round(100 * status["history_tokens"] / 200)


def test_the_hud_keeps_its_compaction_names_beside_the_seeds():
    config = ContextConfig(compaction_trigger_tokens=200)
    manager = ContextManager(ModelFacts(name="m"), TokenCounter("cl100k_base"), config=config)
    manager.set_history([{"role": "user", "content": "word " * 40}])
    status = compaction_status(manager)
    assert (status["enabled"], status["trigger"]) == (status["compaction_on"], 200)
    assert status["percent"] == status["history_percent"] > 0
