"""The requests a replay sent, and their price under one provider's cache rules.

A replay records every request once (`Recording`); pricing it under each rule set is then
pure and cheap. The simple layouts do not depend on the provider, so each is recorded once
and priced under every rule set; acdc's requests do (the lifetime it writes, whether side
requests reuse the chat's prefix), so acdc is recorded once per rule set, with the fake
model acting as that provider's model (`acting_as`: its name, provider, prices and cache
minimum, and its window: the context a server would give that model, so the budgets that
shape a layout — what to shed, how stale a copy may grow — are the provider's). Compaction
requests (`Sent.side`) go to the smaller model, which in the benchmark is the chat's own
model, so they share the chat's cache: acdc's reuse its prefix where that is cheaper, the
simple layouts' send a fresh transcript. The rule sets are those of one representative model
per provider, from litellm's bundled map.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from chat.llm.facts import model_facts
from chat.llm.sdk import model_info
from contextcore.models import ModelFacts
from contextcore.prompt.cacherules import CacheRules, rules_for
from contextcore.prompt.cachesim import CacheSimulator, SimulationReport
from contextcore.tokens import TokenCounter

# (label, model whose facts give the rules and prices)
RULE_MODELS: tuple[tuple[str, str], ...] = (
    ("Anthropic", "anthropic/claude-sonnet-4-5"),
    ("OpenAI", "openai/gpt-4.1"),
    ("DeepSeek", "deepseek/deepseek-chat"),
    ("Gemini", "gemini/gemini-2.5-pro"),
    ("Grok", "xai/grok-4"),
)


@dataclass(frozen=True)
class Sent:
    messages: list[dict[str, Any]]
    at: float
    side: bool = False  # a topic-detector or summarizer request
    refresh: bool = False  # a keep-alive refresh while the person was away
    tools: list[dict[str, Any]] | None = None  # cached by the provider before the messages


@dataclass
class Recording:
    session: str
    strategy: str
    sent: list[Sent] = field(default_factory=list)
    compactions: list[int] = field(default_factory=list)  # chat turn index after which

    @property
    def chat(self) -> list[Sent]:
        return [s for s in self.sent if not s.side]


def price(recording: Recording, rules: CacheRules, counter: TokenCounter) -> SimulationReport:
    """Every request of `recording`, in order, priced under `rules`."""
    simulator = CacheSimulator(counter, rules)
    report = SimulationReport()
    for sent in recording.sent:
        report.requests.append(simulator.request(sent.messages, sent.at, tools=sent.tools))
    return report


def lowest(recording: Recording, rules: CacheRules, counter: TokenCounter) -> float:
    """The least any cache layout could charge for `recording`'s requests under `rules`
    (`CacheSimulator.lowest_cost`): what its content allows, however it is marked."""
    requests = [(sent.messages, sent.tools) for sent in recording.sent]
    return CacheSimulator(counter, rules).lowest_cost(requests)


@dataclass(frozen=True)
class RuleSet:
    label: str
    rules: CacheRules
    facts: ModelFacts  # the provider's model, from litellm's map


def rule_sets(models: Sequence[tuple[str, str]] = RULE_MODELS) -> list[RuleSet]:
    """One rule set per provider, from litellm's map through chat's facts table."""
    found = []
    for label, model in models:
        facts = model_facts(model, model_info)[0]
        found.append(RuleSet(f"{label} ({model})", rules_for(facts), facts))
    return found


def acting_as(base: ModelFacts, target: ModelFacts) -> ModelFacts:
    """`base` (the fake's facts) with what picks and prices `target`'s cache rules and
    sizes its budgets: the window and output reserve of `target`, as `acdc serve` would
    take them from litellm's map for that model."""
    return replace(
        base,
        name=target.name,
        max_input_tokens=target.max_input_tokens,
        max_output_tokens=target.max_output_tokens,
        provider=target.provider,
        input_cost_per_token=target.input_cost_per_token,
        cache_read_cost_per_token=target.cache_read_cost_per_token,
        cache_write_cost_per_token=target.cache_write_cost_per_token,
        cache_write_1h_cost_per_token=target.cache_write_1h_cost_per_token,
        min_cacheable_tokens=target.min_cacheable_tokens,
        supports_prompt_caching=target.supports_prompt_caching,
    )
