"""The offline models' cache imitation is the cache simulator under Anthropic's rules:
tools first, the minimum cacheable length, lifetimes renewed on read, on the clock it is
given. What the page reports of a fake or dry-run request is what the provider would bill."""

from __future__ import annotations

from chat.llm.fake import PrefixCache

TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {}}}]
OTHER_TOOLS = [{"type": "function", "function": {"name": "write_file", "parameters": {}}}]


def _request(words: int) -> list[dict]:
    system = [{"type": "text", "text": "rules " * words, "cache_control": {"type": "ephemeral"}}]
    return [{"role": "system", "content": system}, {"role": "user", "content": "What now?"}]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_offline_cache_reads_only_what_repeats_the_tools_too():
    clock = Clock()
    cache = PrefixCache(clock)
    first = cache.lookup(_request(1100), TOOLS)
    assert first.cache_read_tokens == 0 and first.cache_write_tokens > 1100
    clock.now = 60.0
    again = cache.lookup(_request(1100), TOOLS)
    assert again.cache_read_tokens == first.cache_write_tokens
    clock.now = 120.0
    # Other tools: the provider's prefix differs at its first block, nothing is read.
    assert cache.lookup(_request(1100), OTHER_TOOLS).cache_read_tokens == 0


def test_the_offline_cache_keeps_nothing_below_the_minimum_or_past_its_lifetime():
    clock = Clock()
    small = PrefixCache(clock)
    small.lookup(_request(300), TOOLS)
    assert small.lookup(_request(300), TOOLS).cache_read_tokens == 0
    cache = PrefixCache(clock)
    cache.lookup(_request(1100), TOOLS)
    clock.now = 290.0  # read just in time: the entry lives five more minutes from here
    assert cache.lookup(_request(1100), TOOLS).cache_read_tokens > 0
    clock.now = 580.0
    assert cache.lookup(_request(1100), TOOLS).cache_read_tokens > 0
    clock.now = 881.0
    assert cache.lookup(_request(1100), TOOLS).cache_read_tokens == 0
