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


GRAPH = {"file:core.py": "L1", "file:app.py": "active"}
ITEMS = {"file:core.py": "h1", "file:app.py": "h2"}


def requests_at(tracker, times, *, model="m", lifetime=300.0):
    """Requests as a turn makes them: the graph's tiers offered, the request sent, the
    response recorded. Whether each offer was taken."""
    taken = []
    for now in times:
        taken.append(tracker.seed_tiers(GRAPH, now=now, model=model))
        tracker.note_request(now, model=model, lifetime=lifetime)
        tracker.update(ITEMS)
    return taken


def tiers(tracker) -> dict[str, str]:
    return {key: tracker.tier_of(key) for key in ITEMS}


def test_a_session_with_short_gaps_keeps_the_tiers_it_grew():
    tracker = StabilityTracker("seed")
    assert requests_at(tracker, [0, 60, 120, 180, 240]) == [True, False, False, False, False]
    # core.py 9 + 4 requests, app.py 0 + 4: both have moved past the graph's tiers.
    assert tiers(tracker) == {"file:core.py": "L0", "file:app.py": "L3"}

    assert not tracker.seed_tiers(GRAPH, now=240 + 299, model="m")
    assert tiers(tracker) == {"file:core.py": "L0", "file:app.py": "L3"}


def test_after_a_gap_longer_than_the_cache_lifetime_the_graph_tiers_apply_again():
    tracker = StabilityTracker("seed")
    requests_at(tracker, [0, 60, 120, 180, 240])

    assert tracker.cache_lost(240 + 301) == "provider cache expired"
    assert tracker.seed_tiers(GRAPH, now=240 + 301, model="m")
    assert tiers(tracker) == {"file:core.py": "L1", "file:app.py": "active"}
    requests_at(tracker, [541, 600])  # and they grow from there, as after a first request
    assert tiers(tracker) == {"file:core.py": "L1", "file:app.py": "active"}
    assert tracker.count_of("file:core.py") == 10


@pytest.mark.parametrize(("gap", "lost"), [(3599, False), (3601, True)])
def test_the_lifetime_is_the_one_the_last_request_wrote(gap, lost):
    tracker = StabilityTracker("seed")
    requests_at(tracker, [0, 60, 120, 180, 240], lifetime=3600.0)

    assert tracker.seed_tiers(GRAPH, now=240 + gap, model="m") is lost
    assert (tiers(tracker)["file:app.py"] == "active") is lost


def test_another_model_takes_the_graph_tiers_again_even_after_a_short_gap():
    tracker = StabilityTracker("seed")
    requests_at(tracker, [0, 60, 120, 180, 240], model="anthropic/claude-sonnet-4-5")
    restored = StabilityTracker.from_state(json.loads(json.dumps(tracker.to_state())))

    assert restored.cache_lost(250, "anthropic/claude-sonnet-4-5") == ""
    assert restored.cache_lost(250, "openai/gpt-4o") == "model changed"
    assert restored.seed_tiers(GRAPH, now=250, model="openai/gpt-4o")
    assert tiers(restored) == {"file:core.py": "L1", "file:app.py": "active"}


def test_nothing_is_known_lost_without_a_clock_or_a_request():
    tracker = StabilityTracker("seed")
    assert tracker.cache_lost(10_000) == ""
    requests_at(tracker, [None, None])
    assert tracker.cache_lost(None, "m") == ""
    assert not tracker.seed_tiers(GRAPH, model="m")
