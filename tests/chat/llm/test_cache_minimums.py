"""Anthropic's minimum cacheable prompt per model family, as its prompt-caching page lists
it (4,096 tokens for Opus 4.5 and Haiku 4.5, 2,048 for Sonnet 4.6 and Haiku 3/3.5, 1,024
for the other Sonnet and Opus models), reaches the simulator through the facts table."""

from __future__ import annotations

import pytest

from chat.llm.facts import model_facts
from chat.llm.sdk import model_info
from contextcore.prompt.cacherules import rules_for
from contextcore.prompt.cachesim import CacheSimulator
from contextcore.tokens import TokenCounter


def _reads(model: str, words: int) -> int:
    """What a second identical request reads of a `words`-word marked prefix."""
    sim = CacheSimulator(TokenCounter("cl100k_base"), rules_for(model_facts(model, model_info)[0]))
    block = {"type": "text", "text": "word " * words, "cache_control": {"type": "ephemeral"}}
    request = [{"role": "user", "content": [block]}, {"role": "user", "content": "Go."}]
    sim.request(request, 0.0)
    return sim.request(request, 10.0).cache_read_tokens


@pytest.mark.parametrize(
    ("model", "minimum"),
    [
        ("anthropic/claude-sonnet-4-5", 1024),
        ("anthropic/claude-opus-4-1", 1024),
        ("anthropic/claude-3-5-haiku-latest", 2048),
        ("anthropic/claude-haiku-4-5", 4096),
        ("anthropic/claude-opus-4-5", 4096),
    ],
)
def test_a_prefix_is_cached_from_its_model_familys_documented_minimum(model, minimum):
    assert _reads(model, minimum - 100) == 0
    assert _reads(model, minimum + 100) >= minimum
