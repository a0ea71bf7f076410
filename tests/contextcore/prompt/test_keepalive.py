"""Keep-alive refreshes: reading the cached prefix while the person is away, so that their
return reads it instead of writing it again.

The plan (`refresh_times`) and the lifetime chosen with it are checked against the cache
simulator on scripted rhythms; the manager's refresh request against what the next turn
sends.
"""

from __future__ import annotations

import pytest

from contextcore.prompt.cachepolicy import (
    FIVE_MINUTES,
    ONE_HOUR,
    REFRESH_MARGIN,
    choose_write,
    refresh_times,
)
from contextcore.prompt.cacherules import ANTHROPIC, OPENAI
from contextcore.prompt.cachesim import CacheSimulator
from contextcore.prompt.siderequest import REFRESH_NOTE, refresh_request
from contextcore.prompt.stability import StabilityTracker
from tests.contextcore.prompt.exchanges import BODY, selecting, turn

STEADY = [60.0] * 20
COFFEE = [60.0, 60.0, 900.0] * 7  # every third answer read over a 15-minute coffee
OCCASIONAL = ([60.0] * 9 + [900.0]) * 2  # one coffee in ten answers
GONE = [7200.0] * 20  # a question every two hours


def _prefix_blocks(n: int, write: str) -> list[dict]:
    blocks = [{"type": "text", "text": " ".join(["word"] * 6000)}]
    blocks += [{"type": "text", "text": f"turn {i} " + " ".join(["talk"] * 200)} for i in range(n)]
    marker = {"type": "ephemeral", **({"ttl": "1h"} if write == ONE_HOUR else {})}
    blocks[-1] = {**blocks[-1], "cache_control": marker}
    return blocks


def _simulated(counter, gaps: list[float], write: str, refresh: bool) -> float:
    """A 6,000-token prefix growing 200 tokens a request on `gaps`, written with `write`;
    with `refresh`, the planned refreshes (the prefix again, and a short question) in
    every gap, as the web layer sends them."""
    rules, sim, now, cost = ANTHROPIC, CacheSimulator(counter, ANTHROPIC), 0.0, 0.0
    lifetime = rules.lifetime(write)[0]
    times = refresh_times(rules, gaps, lifetime) if refresh else ()
    for n, gap in enumerate([0.0, *gaps]):
        for at in times:
            if at < gap:
                ping = [{"role": "user", "content": _prefix_blocks(n, write)}]
                ping.append({"role": "user", "content": "keep"})
                cost += sim.request(ping, now + at).cost
        now += gap
        cost += sim.request([{"role": "user", "content": _prefix_blocks(n + 1, write)}], now).cost
    return cost


def test_refreshes_go_out_just_before_expiry_and_reach_past_the_pauses_seen():
    times = refresh_times(ANTHROPIC, COFFEE, ANTHROPIC.ttl)
    step = ANTHROPIC.ttl - REFRESH_MARGIN
    assert times == tuple(step * (i + 1) for i in range(len(times)))
    assert times[-1] + ANTHROPIC.ttl >= 900.0  # the coffee breaks end within the last one


def test_refreshes_stop_where_reads_would_cost_more_than_a_rewrite():
    # Two-hour gaps would need 27 refreshes of a 5-minute prefix: rewriting is cheaper.
    assert refresh_times(ANTHROPIC, GONE, ANTHROPIC.ttl) == ()
    most = (ANTHROPIC.write_multiplier - ANTHROPIC.read_multiplier) / ANTHROPIC.read_multiplier
    for gaps in (STEADY, COFFEE, GONE, [300.0, 3000.0] * 10):
        assert len(refresh_times(ANTHROPIC, gaps, ANTHROPIC.ttl)) <= most


def test_automatic_rules_are_never_refreshed():
    assert refresh_times(OPENAI, COFFEE, OPENAI.ttl) == ()


@pytest.mark.parametrize(
    ("gaps", "keep_alive", "expected"),
    [
        (STEADY, True, FIVE_MINUTES),
        (OCCASIONAL, False, ONE_HOUR),  # without refreshes only the hour outlives a coffee
        (OCCASIONAL, True, FIVE_MINUTES),  # with them, five minutes and three refreshes do
        (COFFEE, True, ONE_HOUR),  # a coffee every third answer: refreshes cost more
    ],
)
def test_the_lifetime_chosen_with_refreshes_is_the_one_the_simulator_finds_cheapest(
    counter, gaps, keep_alive, expected
):
    costs = {
        write: _simulated(counter, gaps, write, keep_alive) for write in (FIVE_MINUTES, ONE_HOUR)
    }
    assert min(costs, key=costs.__getitem__) == expected
    assert choose_write(ANTHROPIC, gaps, keep_alive=keep_alive).write == expected


def test_a_refresh_renews_the_prefix_without_changing_the_rhythm():
    tracker = StabilityTracker()
    tracker.note_request(0.0, model="m", lifetime=300.0)
    tracker.note_request(60.0, model="m", lifetime=300.0)
    tracker.note_refresh(330.0)
    assert tracker.gaps == [60.0] and tracker.refreshes == 1
    assert tracker.cache_lost(600.0, "m") == ""  # 270 s after the refresh
    assert tracker.cache_lost(640.0, "m") == "provider cache expired"
    restored = StabilityTracker.from_state(tracker.to_state())
    assert (restored.refreshes, restored.refreshed_at) == (1, 330.0)
    tracker.note_request(600.0, model="m", lifetime=300.0)
    assert (tracker.refreshes, tracker.refreshed_at, tracker.gaps) == (0, None, [60.0, 540.0])


def test_a_turn_after_refreshes_reads_the_prefix_the_layout_kept(make_manager, tmp_path, counter):
    manager = selecting(make_manager, tmp_path, {"app.py": BODY}, keep_alive=True)
    sim = CacheSimulator(counter, ANTHROPIC)
    sim.request(turn(manager, "What does function_3 do?", 0.0), 0.0)
    plan = manager.refresh_plan()
    assert plan and plan[0] == ANTHROPIC.ttl - REFRESH_MARGIN

    for at in plan[:2]:
        refresh = refresh_request(manager.side_prefix(None), "m").messages
        assert refresh[-1]["content"].startswith(REFRESH_NOTE)
        cost = sim.request(refresh, at)
        assert cost.cache_read_tokens > 0.9 * cost.prompt_tokens - counter.count(refresh[-3:])
        manager.stability.note_refresh(at)
    assert manager.refresh_plan() == plan[2:]

    back = plan[1] + 200.0  # 12 minutes after the turn, 200 s after the last refresh
    prepared = manager.prepare_request("And function_4?", now=back)
    assert prepared.breakdown["rebuild_reason"] == ""
    assert sim.request(prepared.messages, back).cache_read_tokens > 0


def test_without_refreshes_the_same_return_finds_the_cache_gone(make_manager, tmp_path):
    manager = selecting(make_manager, tmp_path, {"app.py": BODY})  # keep-alive off: no plan
    turn(manager, "What does function_3 do?", 0.0)
    assert manager.refresh_plan() == ()
    prepared = manager.prepare_request("And function_4?", now=740.0)
    assert prepared.breakdown["rebuild_reason"] == "provider cache expired"


def test_a_turn_that_finds_the_refreshed_prefix_counts_the_rewrite_it_saved(make_manager, tmp_path):
    manager = selecting(make_manager, tmp_path, {"app.py": BODY}, keep_alive=True)
    turn(manager, "What does function_3 do?", 0.0)
    at = manager.refresh_plan()[0]
    manager.stability.note_refresh(at)
    ledger = manager.stability.ledger
    assert ledger.record(prefix_tokens=4000, read_tokens=3990, cost=0.01, saving_per_token=1e-6)
    turn(manager, "And function_4?", at + 200.0)  # back while the refresh kept it
    assert (ledger.sent, ledger.cost, round(ledger.saved, 5)) == (1, 0.01, 0.00399)
    # After a pause the refreshed prefix did not outlive, nothing was saved.
    at = manager.refresh_plan()[0]
    manager.stability.note_refresh(at)
    ledger.record(prefix_tokens=4000, read_tokens=4000, cost=0.01, saving_per_token=1e-6)
    turn(manager, "And function_5?", at + 900.0)
    assert round(ledger.saved, 5) == 0.00399 and ledger.pending == 0.0


def test_a_refresh_that_read_too_little_ends_the_plan_and_is_remembered(make_manager, tmp_path):
    manager = selecting(make_manager, tmp_path, {"app.py": BODY}, keep_alive=True)
    turn(manager, "What does function_3 do?", 0.0)
    plan = manager.refresh_plan()
    manager.stability.note_refresh(plan[0])
    ledger = manager.stability.ledger
    assert not ledger.record(prefix_tokens=4000, read_tokens=3700, cost=0.01, saving_per_token=0)
    assert len(plan) > 1 and manager.refresh_plan() == ()
    restored = StabilityTracker.from_state(manager.stability.to_state())
    assert restored.ledger.stopped.startswith("a keep-alive refresh read 3,700 of the 4,000")
