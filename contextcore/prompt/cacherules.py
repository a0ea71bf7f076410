"""A provider's prompt-cache rules, as data: what is cached, for how long, at what price.

Three kinds. "explicit" (Anthropic, and Claude on Bedrock and Vertex): only prefixes ending
at a `cache_control` breakpoint are written, at a premium (1.25x for the 5-minute
lifetime, 2x for the 1-hour one), and read at `read_multiplier`; a read looks back at most
`lookback` blocks from a breakpoint. "automatic" (OpenAI, DeepSeek, Gemini's implicit
cache, Grok): every prompt is cached by prefix with no write premium; a hit is the longest
cached prefix, counted from `min_tokens` in steps of `granularity`. "none": every token
at full price. Prices are multiples of the model's input price, taken from its
`ModelFacts` (litellm's map) where the map has them, else the provider's documented ratio.
Lifetimes the providers do not document exactly (OpenAI: "5 to 10 minutes of inactivity";
DeepSeek: "a few hours to a few days"; Gemini implicit and Grok: unstated) take the short
end. Tool definitions are part of every rule set's prefix (`cachesim`).
Non-goals: Gemini's explicit cache objects and their storage fee.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from contextcore.models import ModelFacts

FIVE_MINUTES = 300.0
ONE_HOUR = 3600.0


@dataclass(frozen=True)
class CacheRules:
    name: str
    kind: str  # "explicit", "automatic" or "none"
    min_tokens: int = 1024
    granularity: int = 1
    ttl: float = FIVE_MINUTES
    long_ttl: float | None = None  # explicit only: the longer lifetime a breakpoint may ask for
    write_multiplier: float = 1.0
    long_write_multiplier: float = 2.0
    read_multiplier: float = 1.0
    lookback: int = 20
    max_breakpoints: int = 4
    minimum_from_facts: bool = False  # the facts table knows this family's minimum per model

    def cacheable(self, tokens: int) -> int:
        """How many of a `tokens`-long cached prefix a hit counts (0 below the minimum)."""
        if self.kind == "none" or tokens < self.min_tokens:
            return 0
        step = max(1, self.granularity)
        return self.min_tokens + (tokens - self.min_tokens) // step * step

    def lifetime(self, ttl: str | None) -> tuple[float, float]:
        """(seconds, write multiplier) of a breakpoint asking for `ttl` ("1h" or default)."""
        if ttl == "1h" and self.long_ttl:
            return self.long_ttl, self.long_write_multiplier
        return self.ttl, self.write_multiplier


ANTHROPIC = CacheRules(
    "anthropic (explicit breakpoints)",
    "explicit",
    long_ttl=ONE_HOUR,
    write_multiplier=1.25,
    long_write_multiplier=2.0,
    read_multiplier=0.1,
    minimum_from_facts=True,
)
OPENAI = CacheRules(
    "openai (automatic prefix)",
    "automatic",
    granularity=128,
    read_multiplier=0.5,
    minimum_from_facts=True,
)
DEEPSEEK = CacheRules(
    "deepseek (automatic prefix)",
    "automatic",
    min_tokens=64,
    granularity=64,
    ttl=ONE_HOUR,
    read_multiplier=0.1,
)
GEMINI = CacheRules(
    "gemini (implicit prefix)",
    "automatic",
    min_tokens=2048,
    read_multiplier=0.25,
    minimum_from_facts=True,
)
GROK = CacheRules("grok (automatic prefix)", "automatic", read_multiplier=0.25)
NO_CACHE = CacheRules("no caching", "none")

# First match wins, on "<litellm provider> <model name>", lower case. The offline models
# stand in for a Claude model (their facts carry Sonnet-like prices).
_FAMILIES: tuple[tuple[str, CacheRules], ...] = (
    (r"claude|anthropic|^acdc/", ANTHROPIC),
    (r"deepseek", DEEPSEEK),
    (r"gemini", GEMINI),
    (r"^xai|grok", GROK),
    (r"^openai|^azure|^text-completion-openai|gpt|^o\d", OPENAI),
)


def rules_for(facts: ModelFacts) -> CacheRules:
    """The cache rules of the model `facts` describe, priced from the facts themselves."""
    key = f"{facts.provider} {facts.name}".strip().lower()
    family = next((rules for pattern, rules in _FAMILIES if re.search(pattern, key)), None)
    if family is None:
        # The offline models and anything else with explicit write prices behave like
        # Anthropic; a model the map gives no cache price at all caches nothing.
        if facts.cache_write_cost_per_token:
            family = ANTHROPIC
        elif facts.cache_read_cost_per_token and facts.supports_prompt_caching:
            family = replace(
                OPENAI, name="automatic prefix", granularity=1, minimum_from_facts=False
            )
        else:
            return NO_CACHE
    if not facts.supports_prompt_caching and facts.known:
        return NO_CACHE
    return _priced(family, facts)


def _priced(rules: CacheRules, facts: ModelFacts) -> CacheRules:
    price = facts.input_cost_per_token
    if not price:
        return replace(rules, min_tokens=_minimum(rules, facts))

    def ratio(cost: float, default: float) -> float:
        return cost / price if cost else default

    return replace(
        rules,
        min_tokens=_minimum(rules, facts),
        read_multiplier=ratio(facts.cache_read_cost_per_token, rules.read_multiplier),
        write_multiplier=ratio(facts.cache_write_cost_per_token, rules.write_multiplier)
        if rules.kind == "explicit"
        else 1.0,
        long_write_multiplier=ratio(
            facts.cache_write_1h_cost_per_token, rules.long_write_multiplier
        ),
    )


def _minimum(rules: CacheRules, facts: ModelFacts) -> int:
    return facts.min_cacheable_tokens if rules.minimum_from_facts else rules.min_tokens
