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
