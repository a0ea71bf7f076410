"""The cache simulator against the providers' documented rules, one hand-worked example
per rule: Anthropic's prompt-caching page (the prefix is tools, then system, then
messages; what invalidates which part; at most 4 breakpoints; lifetimes renewed on use)
and the automatic providers' pages (OpenAI: the tools are part of the cached prefix).
Each example is built so that it fails when its rule is left out of the simulator."""

from __future__ import annotations

import pytest

from contextcore.prompt.cacherules import ANTHROPIC, DEEPSEEK, GEMINI, GROK, OPENAI
from contextcore.prompt.cachesim import CacheSimulator, TooManyBreakpoints

MARK = {"type": "ephemeral"}
SEARCH = {"type": "function", "function": {"name": "search", "parameters": {}}}
EDIT = {"type": "function", "function": {"name": "edit", "parameters": {}}}
PIXEL = "data:image/png;base64,iVBORw0KGgo="


def _text(words: int, label: str, mark: dict | None = None) -> dict:
    block = {"type": "text", "text": f"{label} " + "word " * words}
    return {**block, "cache_control": mark} if mark else block


def _request(question: str = "What now?", *, image: bool = False) -> list[dict]:
    """A 1,500-word system prompt and a 1,500-word document, each ending in a breakpoint,
    then the question (with an image when asked)."""
    last: list[dict] = [{"type": "text", "text": question}]
    if image:
        last.append({"type": "image_url", "image_url": {"url": PIXEL}})
    return [
        {"role": "system", "content": [_text(1500, "system", MARK)]},
        {"role": "user", "content": [_text(1500, "document", MARK)]},
        {"role": "assistant", "content": "Read it."},
        {"role": "user", "content": last},
    ]


def _system_tokens(counter, tools) -> int:
    """What a read of the tools and system alone counts."""
    sim = CacheSimulator(counter, ANTHROPIC)
    return sim.request(_request()[:1], 0.0, tools=tools).prompt_tokens


def test_anthropic_reads_a_prefix_only_with_the_same_tools_in_front(counter):
    sim = CacheSimulator(counter, ANTHROPIC)
    first = sim.request(_request(), 0.0, tools=[SEARCH])
    same = sim.request(_request("And then?"), 10.0, tools=[SEARCH])
    assert same.cache_read_tokens == first.cache_write_tokens
    # A request without the tools (a side request that left them out) repeats nothing
    # the first wrote: it writes all of it again at 1.25x.
    bare = sim.request(_request(), 20.0)
    assert bare.cache_read_tokens == 0 and bare.cache_write_tokens > 3000


def test_anthropic_a_change_in_tools_invalidates_system_and_messages_too(counter):
    sim = CacheSimulator(counter, ANTHROPIC)
    sim.request(_request(), 0.0, tools=[SEARCH])
    changed = sim.request(_request(), 10.0, tools=[SEARCH, EDIT])
    assert changed.cache_read_tokens == 0


def test_anthropic_a_change_of_tool_choice_invalidates_only_the_message_blocks(counter):
    sim = CacheSimulator(counter, ANTHROPIC)
    sim.request(_request(), 0.0, tools=[SEARCH])
    forced = sim.request(_request(), 10.0, tools=[SEARCH], tool_choice={"type": "any"})
    assert forced.cache_read_tokens == _system_tokens(counter, [SEARCH])


def test_anthropic_adding_an_image_invalidates_only_the_message_blocks(counter):
    sim = CacheSimulator(counter, ANTHROPIC)
    sim.request(_request(), 0.0, tools=[SEARCH])
    pictured = sim.request(_request(image=True), 10.0, tools=[SEARCH])
    assert pictured.cache_read_tokens == _system_tokens(counter, [SEARCH])


def test_anthropic_system_blocks_come_before_the_messages_wherever_they_are_listed(counter):
    sim = CacheSimulator(counter, ANTHROPIC)
    sim.request(_request(), 0.0, tools=[SEARCH])
    system, *rest = _request()
    # The API takes `system` apart from `messages`: listing it later changes nothing.
    moved = sim.request([rest[0], system, *rest[1:]], 10.0, tools=[SEARCH])
    assert moved.cache_read_tokens > 3000


def test_anthropic_refuses_a_fifth_breakpoint(counter):
    sim = CacheSimulator(counter, ANTHROPIC)
    blocks = [_text(10, f"part {i}", MARK) for i in range(5)]
    with pytest.raises(TooManyBreakpoints, match="maximum of 4"):
        sim.request([{"role": "user", "content": blocks}], 0.0)
    sim.request([{"role": "user", "content": blocks[:4]}], 0.0)  # four are fine


def test_anthropic_one_hour_entries_are_renewed_by_each_read(counter):
    sim = CacheSimulator(counter, ANTHROPIC)
    hour = {"type": "ephemeral", "ttl": "1h"}
    request = [{"role": "user", "content": [_text(2000, "document", hour)]}]
    sim.request(request, 0.0)
    assert sim.request(request, 3500.0).cache_read_tokens > 0
    # 6,900 s after the write but 3,400 s after the last read: still there.
    assert sim.request(request, 6900.0).cache_read_tokens > 0
    assert sim.request(request, 6900.0 + 3601.0).cache_read_tokens == 0


@pytest.mark.parametrize("rules", [OPENAI, DEEPSEEK, GEMINI, GROK], ids=lambda r: r.name)
def test_automatic_prefix_caches_key_on_the_tools_first(counter, rules):
    sim = CacheSimulator(counter, rules)
    sim.request(_request(), 0.0, tools=[SEARCH])
    assert sim.request(_request("And then?"), 10.0, tools=[SEARCH]).cache_read_tokens > 2500
    assert sim.request(_request("And then?"), 20.0, tools=[EDIT]).cache_read_tokens == 0


def test_openai_counts_the_tools_in_the_1024_token_minimum(counter):
    # OpenAI: a prompt of at least 1,024 tokens, tools included, is cached.
    tools = [{**SEARCH, "function": {**SEARCH["function"], "description": "find " * 400}}]
    request = [{"role": "user", "content": "word " * 700}, {"role": "user", "content": "Go."}]
    sim = CacheSimulator(counter, OPENAI)
    sim.request(request, 0.0, tools=tools)
    read = sim.request(request, 10.0, tools=tools).cache_read_tokens
    assert read >= 1024 and (read - 1024) % 128 == 0
