"""The requests a replay sent, and their price under one provider's cache rules.

A replay records every request once (`Recording`); pricing it under each rule set is then
pure and cheap, so every session shape is measured under every provider's rules from the
same requests. Compaction requests (`Sent.side`) go to the smaller model, which in the
benchmark is the chat's own model (`acdc/fake` for both), so they share the chat's cache:
acdc's reuse its prefix, the simple layouts' send a fresh transcript. The rule sets are
those of one representative model per provider, from litellm's bundled map.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from chat.llm.facts import model_facts
from chat.llm.sdk import model_info
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
        report.requests.append(simulator.request(sent.messages, sent.at))
    return report


def rule_sets(models: Sequence[tuple[str, str]] = RULE_MODELS) -> list[tuple[str, CacheRules]]:
    """(label, rules) per provider, from litellm's map through chat's facts table."""
    return [
        (f"{label} ({model})", rules_for(model_facts(model, model_info)[0]))
        for label, model in models
    ]
