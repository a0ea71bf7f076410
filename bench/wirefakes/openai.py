"""Automatic prefix caching as OpenAI documents it, with parameters for its imitators.

The prompt is the serialised request, tools first, then each message (markers removed);
its tokens are concatenated. A request whose prompt reaches `minimum` tokens leaves its
prefix cached in steps of `granularity` tokens; a later request for the same model reads
the longest live cached prefix it shares, counted in whole steps from the minimum (so
`cached_tokens` is 0, 1024, 1152, ... under OpenAI's rules), and the read renews what it
read. Entries expire `lifetime` seconds after their last use. `AUTOMATIC_RULES` holds the
parameters this fake uses for OpenAI, DeepSeek, Gemini's implicit cache and Grok.
Written from the documentation, independently of contextcore's simulator. Non-goals:
routing by `prompt_cache_key`, eviction under load, DeepSeek's own usage field names.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from typing import Any

from bench.wirefakes.tokens import IMAGE_TOKENS, canonical, encode, has_image


@dataclass(frozen=True)
class AutomaticRules:
    minimum: int = 1024
    granularity: int = 128
    lifetime: float = 300.0


AUTOMATIC_RULES = {
    "openai": AutomaticRules(1024, 128, 300.0),
    "deepseek": AutomaticRules(64, 64, 3600.0),
    "gemini": AutomaticRules(2048, 1, 300.0),
    "grok": AutomaticRules(1024, 1, 300.0),
}


def prompt_tokens(body: dict[str, Any]) -> list[int]:
    """The request as one token sequence: tools, tool choice, then each message."""
    parts = [canonical({"tool": tool}) for tool in body.get("tools") or []]
    if body.get("tool_choice") is not None:
        parts.append(canonical({"tool_choice": body["tool_choice"]}))
    tokens: list[int] = []
    for part in parts:
        tokens.extend(encode(part))
    for message in body.get("messages") or []:
        tokens.extend(encode(canonical(message)))
        if has_image(message):  # a stand-in token per image tile, so images cost
            tokens.extend([0] * IMAGE_TOKENS)
    return tokens


class PrefixCache:
    """One organisation's automatic cache under `rules`; thread-safe."""

    def __init__(self, rules: AutomaticRules = AUTOMATIC_RULES["openai"]) -> None:
        self.rules = rules
        self._entries: dict[bytes, float] = {}  # prefix hash at a step -> expires
        self._lock = threading.Lock()

    def process(self, body: dict[str, Any], now: float) -> tuple[int, int]:
        """(prompt tokens, cached tokens) of `body` at `now`; caches its prefix."""
        tokens = prompt_tokens(body)
        steps = self._step_hashes(str(body.get("model", "")), tokens)
        with self._lock:
            cached = 0
            for length, key in reversed(steps):
                expires = self._entries.get(key)
                if expires is not None and expires > now:
                    cached = length
                    break
            for _, key in steps:  # the read renews, the rest is written
                self._entries[key] = now + self.rules.lifetime
        return len(tokens), cached

    def _step_hashes(self, model: str, tokens: list[int]) -> list[tuple[int, bytes]]:
        """(length, hash of tokens[:length]) at every step from the minimum on."""
        rules = self.rules
        digest = hashlib.blake2b(model.encode(), digest_size=16)
        found, start = [], 0
        if len(tokens) < rules.minimum:
            return []
        boundaries = [rules.minimum]
        boundaries += range(rules.minimum + rules.granularity, len(tokens) + 1, rules.granularity)
        for end in boundaries:
            digest.update(_pack(tokens[start:end]))
            start = end
            found.append((end, digest.copy().digest()))
        return found


def _pack(tokens: list[int]) -> bytes:
    return b"".join(t.to_bytes(4, "little") for t in tokens)
