from __future__ import annotations

import json

import pytest

from contextcore.manager import ContextConfig, ContextManager
from contextcore.models import ModelFacts
from contextcore.tokens import TokenCounter


def test_add_message_appends_one_message(make_manager):
    manager = make_manager()
    manager.add_message("user", "hi")
    assert manager.get_history() == [{"role": "user", "content": "hi"}]


def test_add_exchange_appends_a_pair(make_manager):
    manager = make_manager()
    manager.add_exchange("q", "a")
    assert [m["role"] for m in manager.get_history()] == ["user", "assistant"]


def test_get_history_returns_a_copy(make_manager):
    manager = make_manager()
    manager.add_message("user", "hi")
    manager.get_history()[0]["content"] = "mutated"
    manager.get_history().append({"role": "user", "content": "x"})
    assert manager.get_history() == [{"role": "user", "content": "hi"}]


def test_set_history_replaces_and_clear_history_empties(make_manager):
    manager = make_manager()
    manager.add_exchange("q", "a")
    manager.set_history([{"role": "user", "content": "only"}])
    assert manager.get_history() == [{"role": "user", "content": "only"}]
    manager.clear_history()
    assert manager.get_history() == []


def test_history_token_count_is_positive_for_a_non_empty_history(make_manager):
    manager = make_manager()
    assert manager.history_token_count() == 0
    manager.add_exchange("question", "answer")
    assert manager.history_token_count() > 0


def test_token_budget_has_the_seed_keys_and_a_section_breakdown(make_manager):
    manager = make_manager()
    manager.add_exchange("q", "a")
    budget = manager.get_token_budget()
    for key in (
        "history_tokens",
        "max_history_tokens",
        "max_input_tokens",
        "remaining",
        "needs_summary",
    ):
        assert key in budget
    assert budget["remaining"] > 0
    assert budget["max_history_tokens"] == 200_000 // 16
    assert set(budget["sections"]) == {
        "system",
        "instructions",
        "repo_map",
        "reference_files",
        "active_files",
        "metadata",
        "history",
        "current_message",
    }
    assert budget["sections"]["history"]["tokens"] > 0


def test_should_compact_is_false_when_disabled_or_below_the_trigger(make_manager):
    manager = make_manager(compaction_trigger_tokens=50)
    manager.add_exchange("short", "short")
    assert not manager.should_compact()
    manager.add_exchange("word " * 100, "word " * 100)
    assert manager.should_compact()
    disabled = make_manager(compaction_trigger_tokens=50, compaction_enabled=False)
    disabled.add_exchange("word " * 100, "word " * 100)
    assert not disabled.should_compact()


# Seed 000 (000_8dcaad5951ac463d.txt), "Testing / ContextManager", word for word:
SEED_COMPACTION_STATUS = "Compaction status returns enabled/trigger/percent"


@pytest.mark.parametrize("enabled", [True, False])
def test_the_compaction_status_returns_the_keys_the_seed_names(make_manager, enabled):
    named = SEED_COMPACTION_STATUS.rsplit(" ", 1)[-1].split("/")
    manager = make_manager(compaction_trigger_tokens=200, compaction_enabled=enabled)
    manager.set_history([{"role": "user", "content": "word " * 40}])
    status = manager.get_compaction_status()
    assert set(named) <= set(status)
    assert status["enabled"] is enabled and status["trigger"] == 200
    history = manager.history_token_count()
    assert 0 < history < 200 and status["history_tokens"] == history
    assert status["percent"] == round(100 * history / 200)  # the history's share of the trigger


def test_the_default_compaction_trigger_scales_with_the_model_window(make_manager, facts):
    big = make_manager()
    small = make_manager(facts_=ModelFacts(name="small", max_input_tokens=16_000))
    assert big.compaction_trigger == facts.input_budget // 6 == 25_000
    assert small.compaction_trigger < big.compaction_trigger


def test_pins_are_kept_only_for_files_in_context(make_manager):
    manager = make_manager()
    manager.file_context.add_file("a.py", "a")
    assert manager.pin_file("a.py") and not manager.pin_file("b.py")
    assert manager.file_context.pinned == {"a.py"}


def test_state_survives_a_json_round_trip_with_the_same_prompt_layout(make_manager, facts, counter):
    manager = make_manager()
    manager.file_context.add_file("a.py", "alpha = 1\n" * 300)
    manager.file_context.add_file("b.py", "beta = 2\n" * 300)
    manager.pin_file("b.py")
    for turn in range(3):
        manager.prepare_request(f"question {turn}", now=turn * 60.0)
        manager.record_exchange(f"question {turn}", f"answer {turn}")
    manager.file_context.add_file("a.py", "alpha = 3\n" * 300)
    state = json.loads(json.dumps(manager.to_state()))
    restored = ContextManager.from_state(state, facts, counter, config=manager.config)
    assert restored.file_context.pinned == {"b.py"}
    expected = manager.prepare_request("next", now=300.0).messages
    assert restored.prepare_request("next", now=300.0).messages == expected


def test_record_exchange_appends_and_ages_stability_items(make_manager):
    manager = make_manager("seed")
    manager.file_context.add_file("a.py", "a")
    manager.prepare_request("q")
    manager.record_exchange("q", "a")
    manager.prepare_request("q2")
    manager.record_exchange("q2", "a2")
    assert manager.stability.count_of("file:a.py") == 1
    assert len(manager.get_history()) == 4


def test_message_ids_and_pins_stay_in_the_engine_but_never_reach_the_wire(tmp_path):
    for scheme in ("acdc", "seed", "last", "none"):
        manager = ContextManager(
            ModelFacts(name="gpt-4o"),
            TokenCounter("o200k_base"),
            repo_root=tmp_path,
            config=ContextConfig(tier_scheme=scheme),
        )
        manager.record_exchange("keep this rule", "noted", ids=("m1", "m2"))
        # a pinned message comes in as the working history does (chat.session.working)
        history = manager.get_history()
        manager.set_history([{**m, "pinned": m.get("id") == "m1"} for m in history])
        state = ContextManager.from_state(
            manager.to_state(), manager.facts, manager.counter, repo_root=tmp_path
        ).get_history()
        assert state[0] == {"role": "user", "content": "keep this rule", "id": "m1", "pinned": True}
        sent = manager.prepare_request("next").messages
        assert all(set(m) <= {"role", "content"} for m in sent if m["role"] != "system"), scheme
        assert any(m.get("content") == "keep this rule" for m in sent), scheme
