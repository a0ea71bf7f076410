from __future__ import annotations

from dataclasses import replace

import pytest

from contextcore.prompt.cacherules import ANTHROPIC, DEEPSEEK, GEMINI, GROK, NO_CACHE, OPENAI
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


def _words(n: int) -> str:
    """A text of exactly `n` cl100k tokens (a message adds 4)."""
    return " ".join(["word"] * n)


def _marked(text: str, ttl: str | None = None) -> dict:
    marker = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
    return {"role": "user", "content": [{"type": "text", "text": text, "cache_control": marker}]}


def test_explicit_rules_price_a_write_at_1_25x_and_a_read_at_0_1x(counter):
    sim = CacheSimulator(counter, ANTHROPIC)
    prefix = _marked(_words(1996))  # 2,000 tokens
    first = sim.request([prefix, {"role": "user", "content": _words(96)}], now=0)
    second = sim.request([prefix, {"role": "user", "content": _words(196)}], now=60)
    # 2,000 written at 1.25 + 100 uncached; then 2,000 read at 0.1 + 200 uncached.
    assert (first.cache_write_tokens, first.cost) == (2000, pytest.approx(2600))
    assert (second.cache_read_tokens, second.cost) == (2000, pytest.approx(400))


def test_the_one_hour_lifetime_costs_2x_to_write_and_outlives_a_long_pause(counter):
    five, hour = CacheSimulator(counter, ANTHROPIC), CacheSimulator(counter, ANTHROPIC)
    assert five.request([_marked(_words(1996))], now=0).cost == pytest.approx(2500)
    assert hour.request([_marked(_words(1996), "1h")], now=0).cost == pytest.approx(4000)
    # Twenty minutes later: the 5-minute entry is gone, the 1-hour one is read.
    assert five.request([_marked(_words(1996))], now=1200).cache_read_tokens == 0
    assert hour.request([_marked(_words(1996), "1h")], now=1200).cost == pytest.approx(200)


def test_explicit_rules_cache_nothing_below_the_models_minimum(counter):
    sim = CacheSimulator(counter, replace(ANTHROPIC, min_tokens=4096))
    sim.request([_marked(_words(2996))], now=0)
    assert sim.request([_marked(_words(2996))], now=1).cost == 3000


def test_openai_reads_from_1024_tokens_in_128_token_steps_with_no_write_premium(counter):
    sim = CacheSimulator(counter, OPENAI)
    first = sim.request([{"role": "user", "content": _words(1496)}], now=0)  # 1,500 tokens
    second = sim.request(
        [{"role": "user", "content": _words(1496)}, {"role": "user", "content": _words(96)}],
        now=30,
    )
    assert (first.cache_write_tokens, first.cost) == (0, 1500)
    # 1,024 + 3 x 128 = 1,408 of the 1,500 repeated tokens are read, at 0.5x.
    assert second.cache_read_tokens == 1408
    assert second.cost == pytest.approx(1408 * 0.5 + (1600 - 1408))


def test_automatic_rules_read_nothing_below_the_minimum_or_after_the_lifetime(counter):
    sim = CacheSimulator(counter, OPENAI)
    sim.request([{"role": "user", "content": _words(996)}], now=0)  # 1,000 tokens
    assert sim.request([{"role": "user", "content": _words(996)}], now=1).cache_read_tokens == 0
    sim.request([{"role": "user", "content": _words(1996)}], now=2)
    assert sim.request([{"role": "user", "content": _words(1996)}], now=400).cache_read_tokens == 0


def test_deepseek_counts_hits_in_64_token_units_and_keeps_them_an_hour(counter):
    sim = CacheSimulator(counter, DEEPSEEK)
    sim.request([{"role": "user", "content": _words(196)}], now=0)  # 200 tokens
    hit = sim.request([{"role": "user", "content": _words(196)}], now=3000)
    assert hit.cache_read_tokens == 192  # 3 x 64
    assert hit.cost == pytest.approx(192 * 0.1 + 8)


def test_gemini_and_grok_cache_by_prefix_at_their_own_minimum_and_price(counter):
    gemini, grok = CacheSimulator(counter, GEMINI), CacheSimulator(counter, GROK)
    for sim in (gemini, grok):
        sim.request([{"role": "user", "content": _words(1496)}], now=0)
    assert gemini.request([{"role": "user", "content": _words(1496)}], now=1).cost == 1500
    hit = grok.request([{"role": "user", "content": _words(1496)}], now=1)
    assert (hit.cache_read_tokens, hit.cost) == (1500, pytest.approx(375))


def test_automatic_rules_ignore_breakpoints_and_read_the_longest_common_prefix(counter):
    sim = CacheSimulator(counter, replace(OPENAI, granularity=1))
    shared = {"role": "user", "content": _words(1996)}
    sim.request([shared, {"role": "assistant", "content": "a"}], now=0)
    hit = sim.request([_marked(_words(1996)), {"role": "assistant", "content": "b"}], now=1)
    assert hit.cache_read_tokens == 2000


def test_no_caching_prices_every_token_in_full(counter):
    sim = CacheSimulator(counter, NO_CACHE)
    sim.request([_marked(_words(1996))], now=0)
    assert sim.request([_marked(_words(1996))], now=1).cost == 2000


def test_only_the_prefix_a_request_reads_is_renewed_not_the_shorter_ones_it_marks(counter):
    sim = CacheSimulator(counter, ANTHROPIC)
    files = _marked(_words(1996))
    talk = [{"role": "user", "content": _words(100) + f" turn {n}"} for n in range(3)]
    sim.request([files, _marked(talk[0]["content"])], now=0)
    sim.request([files, talk[0], _marked(talk[1]["content"])], now=200)
    second = sim.request([files, *talk[:2], _marked(talk[2]["content"])], now=400)
    assert second.cache_read_tokens > 2000  # the longest prefix was read each time
    # The files' own entry was written at 0 and never read since: gone after 5 minutes.
    assert sim.request([files, _marked("a new topic")], now=600).cache_read_tokens == 0
    # Read while it lives, it is renewed.
    sim.request([files, _marked("another topic")], now=700)
    assert sim.request([files, _marked("a third topic")], now=950).cache_read_tokens == 2000


def test_the_lowest_cost_reads_only_prefixes_sent_before_and_prices_the_rest_in_full(counter):
    first, grown, changed = _msgs(BIG, "q1"), _msgs(BIG, "q1", "q2"), _msgs("other", BIG)
    sizes = [CacheSimulator(counter).request(m, now=0).prompt_tokens for m in (first, grown)]
    sim = CacheSimulator(counter, ANTHROPIC)
    # The second request repeats the whole first one: read at 0.1x, only "q2" in full.
    assert sim.lowest_cost([(first, None), (grown, None)]) == pytest.approx(
        sizes[0] + sizes[0] * 0.1 + (sizes[1] - sizes[0])
    )
    # A changed first block leaves nothing to read, breakpoints or not.
    alone = CacheSimulator(counter).request(changed, now=0).prompt_tokens
    assert sim.lowest_cost([(first, None), (changed, None)]) == pytest.approx(sizes[0] + alone)
    # Tools come first: other tools, nothing read.
    tools = [{"type": "function", "function": {"name": "t", "parameters": {}}}]
    with_tools = CacheSimulator(counter).request(first, now=0, tools=tools).prompt_tokens
    assert sim.lowest_cost([(first, None), (first, tools)]) == pytest.approx(sizes[0] + with_tools)
