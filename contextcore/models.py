"""Model facts: what the context engine needs to know about one model.

The chat adapter fills these from litellm's bundled model map, per model; contextcore never
assumes one constant for every model. `ModelFacts.unknown()` gives the documented safe
defaults used when the map has no entry (the caller also warns the user).
"""

from __future__ import annotations

from dataclasses import dataclass

# Safe defaults for a model litellm does not know: a window most current models exceed,
# and no price (cost shown as unknown rather than wrong).
DEFAULT_MAX_INPUT_TOKENS = 32_000
DEFAULT_MAX_OUTPUT_TOKENS = 4_096
DEFAULT_MIN_CACHEABLE_TOKENS = 1_024


@dataclass(frozen=True)
class ModelFacts:
    name: str
    max_input_tokens: int = DEFAULT_MAX_INPUT_TOKENS
    max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS
    input_cost_per_token: float = 0.0
    output_cost_per_token: float = 0.0
    cache_read_cost_per_token: float = 0.0
    cache_write_cost_per_token: float = 0.0
    cache_write_1h_cost_per_token: float = 0.0  # Anthropic's 1-hour lifetime
    min_cacheable_tokens: int = DEFAULT_MIN_CACHEABLE_TOKENS
    supports_tools: bool = False
    supports_vision: bool = False
    supports_prompt_caching: bool = False
    tokenizer: str = "cl100k_base"
    known: bool = True
    provider: str = ""  # litellm's provider name, which picks the cache rules
    tool_tokens: int = 0  # tool definitions sent with every request of this turn
    # Provider tokens per token acdc estimates (`contextcore.calibration`): budgets are
    # kept in acdc's units, so the window they are measured against is divided by it.
    token_factor: float = 1.0

    @property
    def max_history_tokens(self) -> int:
        return self.max_input_tokens // 16

    @property
    def output_reserve(self) -> int:
        """Tokens kept free for the answer: the output limit, at most a quarter of the window."""
        return min(self.max_output_tokens, self.max_input_tokens // 4)

    @property
    def input_budget(self) -> int:
        """The most an assembled request may ever hold, in acdc's estimate (the tool
        definitions sent beside the messages count against it too): the provider's count
        of it, the estimate times `token_factor`, stays within the window."""
        provider_tokens = self.max_input_tokens - self.output_reserve - self.tool_tokens
        return int(provider_tokens / self.token_factor)

    @property
    def estimate_window(self) -> int:
        """The window in acdc's estimate: what shedding and the HUD measure against."""
        return int(self.max_input_tokens / self.token_factor)

    @classmethod
    def unknown(cls, name: str) -> ModelFacts:
        return cls(name=name, known=False)
