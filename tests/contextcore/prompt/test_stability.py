from __future__ import annotations

import json

import pytest

from contextcore.prompt.stability import StabilityTracker


@pytest.mark.parametrize(
    ("requests", "tier"), [(1, "active"), (4, "L3"), (7, "L2"), (10, "L1"), (13, "L0")]
)
def test_items_graduate_by_consecutive_unchanged_requests(requests, tier):
    tracker = StabilityTracker("seed")
    for _ in range(requests):
        tracker.update({"file:a.py": "h1"})
    assert tracker.tier_of("file:a.py") == tier


def test_the_system_prompt_is_always_l0():
    assert StabilityTracker("seed").tier_of("system") == "L0"


def test_a_changed_hash_sends_an_item_back_to_active():
    tracker = StabilityTracker("seed")
    for _ in range(8):
        tracker.update({"file:a.py": "h1"})
    tracker.update({"file:a.py": "h2"})
    assert tracker.tier_of("file:a.py") == "active"


def test_leaving_the_selection_forgets_an_item():
    tracker = StabilityTracker("seed")
    for _ in range(5):
        tracker.update({"file:a.py": "h1", "file:b.py": "h"})
    tracker.update({"file:b.py": "h"})
    tracker.update({"file:a.py": "h1", "file:b.py": "h"})
    assert tracker.count_of("file:a.py") == 0 and tracker.count_of("file:b.py") == 6


def test_purge_history_removes_only_history_items():
    tracker = StabilityTracker("seed")
    tracker.update({"history:0": "h", "file:a.py": "f"})
    tracker.purge_history()
    assert list(tracker.items()) == ["file:a.py"]


def test_tracker_state_round_trips_through_json():
    tracker = StabilityTracker("seed")
    for _ in range(4):
        tracker.update({"file:a.py": "h1", "history:0": "x"})
    restored = StabilityTracker.from_state(json.loads(json.dumps(tracker.to_state())))
    assert restored.items() == tracker.items() and restored.tier_of("file:a.py") == "L3"


def test_an_unknown_scheme_is_refused():
    with pytest.raises(ValueError, match="unknown tier scheme"):
        StabilityTracker("fancy")


def test_initial_tiers_from_the_graph_apply_to_the_first_request():
    tracker = StabilityTracker("seed")
    tracker.seed_tiers({"file:core.py": "L1", "file:util.py": "L3", "file:new.py": "active"})

    assert tracker.tier_of("file:core.py") == "L1"
    assert tracker.tier_of("file:util.py") == "L3"
    assert tracker.tier_of("file:new.py") == "active"
    tracker.update({"file:core.py": "h1", "file:util.py": "h2"})
    tracker.update({"file:core.py": "h1", "file:util.py": "h2"})
    assert tracker.tier_of("file:core.py") == "L1"  # 9 + 1
    assert tracker.tier_of("file:util.py") == "L3"  # 3 + 1


def test_initial_tiers_are_ignored_once_requests_were_tracked():
    tracker = StabilityTracker("seed")
    tracker.update({"file:core.py": "h1"})
    tracker.seed_tiers({"file:core.py": "L1", "file:late.py": "L2"})

    assert tracker.tier_of("file:core.py") == "active"
    assert tracker.tier_of("file:late.py") == "active"


def test_an_edit_after_the_first_request_still_sends_a_seeded_item_to_active():
    tracker = StabilityTracker("seed")
    tracker.seed_tiers({"file:core.py": "L1"})
    tracker.update({"file:core.py": "h1"})
    tracker.update({"file:core.py": "h2"})

    assert tracker.tier_of("file:core.py") == "active"
