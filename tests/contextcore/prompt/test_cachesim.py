from __future__ import annotations

import pytest

from contextcore.prompt.cachesim import CacheSimulator

BIG = "word " * 2000


def _msgs(*texts, mark=None):
    messages = [{"role": "user", "content": t} for t in texts]
    for index in mark or []:
        messages[index] = {
            "role": "user",
            "content": [
                {"type": "text", "text": texts[index], "cache_control": {"type": "ephemeral"}}
            ],
        }
    return messages


def test_a_prefix_is_written_at_a_breakpoint_and_read_by_a_later_request(counter):
    sim = CacheSimulator(counter)
    first = sim.request(_msgs(BIG, "q1", mark=[0]), now=0)
    second = sim.request(_msgs(BIG, "q2", mark=[0]), now=10)
    assert first.cache_read_tokens == 0 and first.cache_write_tokens > 2000
    assert second.cache_read_tokens == first.cache_write_tokens
    assert second.cost == pytest.approx(second.prompt_tokens - second.cache_read_tokens * 0.9)


def test_nothing_is_cached_without_a_breakpoint_or_below_the_minimum(counter):
    sim = CacheSimulator(counter)
    sim.request(_msgs(BIG), now=0)
    assert sim.request(_msgs(BIG), now=1).cache_read_tokens == 0
    small = CacheSimulator(counter)
    small.request(_msgs("tiny", mark=[0]), now=0)
    assert small.request(_msgs("tiny", mark=[0]), now=1).cache_read_tokens == 0


def test_entries_expire_after_five_minutes_unless_used(counter):
    sim = CacheSimulator(counter)
    sim.request(_msgs(BIG, mark=[0]), now=0)
    assert sim.request(_msgs(BIG, mark=[0]), now=290).cache_read_tokens > 0
    assert sim.request(_msgs(BIG, mark=[0]), now=580).cache_read_tokens > 0
    assert sim.request(_msgs(BIG, mark=[0]), now=900).cache_read_tokens == 0


def test_lookback_finds_earlier_writes_only_within_twenty_blocks(counter):
    sim = CacheSimulator(counter)
    sim.request(_msgs(BIG, mark=[0]), now=0)
    near = [BIG] + [f"m{i}" for i in range(19)]
    assert sim.request(_msgs(*near, mark=[19]), now=1).cache_read_tokens > 0
    far = CacheSimulator(counter)
    far.request(_msgs(BIG, mark=[0]), now=0)
    beyond = [BIG] + [f"m{i}" for i in range(25)]
    assert far.request(_msgs(*beyond, mark=[25]), now=1).cache_read_tokens == 0


def test_a_changed_block_breaks_the_prefix_after_it(counter):
    sim = CacheSimulator(counter)
    sim.request(_msgs(BIG, BIG + "x", mark=[1]), now=0)
    assert sim.request(_msgs(BIG + "y", BIG + "x", mark=[1]), now=1).cache_read_tokens == 0
