"""A simulation of Anthropic's prompt cache, for benchmarking prompt layouts.

Rules modelled: a request is a sequence of content blocks (a string message is one text
block; `cache_control` does not change a block's identity). At each breakpoint whose
prefix reaches `min_cacheable_tokens` the prefix is written to the cache; a later request
reads the longest previously written prefix it repeats exactly, found by looking back up
to `lookback` blocks from each of its breakpoints. Entries live `ttl` seconds, refreshed
on use, on the caller's fake clock. Cost is in input-token units: uncached tokens 1x,
writes `write_multiplier`, reads `read_multiplier`. Non-goals: tools, output tokens,
the 1-hour cache, per-model prices.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from contextcore.llm import Message
from contextcore.tokens import IMAGE_FLAT_TOKENS, MESSAGE_OVERHEAD, TokenCounter


@dataclass(frozen=True)
class RequestCost:
    prompt_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost: float


@dataclass
class SimulationReport:
    requests: list[RequestCost] = field(default_factory=list)

    @property
    def prompt_tokens(self) -> int:
        return sum(r.prompt_tokens for r in self.requests)

    @property
    def cache_read_tokens(self) -> int:
        return sum(r.cache_read_tokens for r in self.requests)

    @property
    def cache_write_tokens(self) -> int:
        return sum(r.cache_write_tokens for r in self.requests)

    @property
    def cost(self) -> float:
        return sum(r.cost for r in self.requests)

    @property
    def cache_read_share(self) -> float:
        return self.cache_read_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


def _blocks(messages: Sequence[Message]) -> Iterable[tuple[str, bool, str | None, bool]]:
    """(identity, has breakpoint, text (None for an image), first of its message) per block."""
    for message in messages:
        role, content = message.get("role", ""), message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for position, block in enumerate(blocks or []):
            identity = json.dumps(
                [role, {k: v for k, v in block.items() if k != "cache_control"}], sort_keys=True
            )
            text = block.get("text", "") if block.get("type") == "text" else None
            yield identity, "cache_control" in block, text, position == 0


class CacheSimulator:
    def __init__(
        self,
        counter: TokenCounter,
        *,
        min_cacheable_tokens: int = 1024,
        ttl: float = 300.0,
        lookback: int = 20,
        write_multiplier: float = 1.25,
        read_multiplier: float = 0.1,
    ) -> None:
        self.counter = counter
        self.min_cacheable_tokens = min_cacheable_tokens
        self.ttl, self.lookback = ttl, lookback
        self.write_multiplier, self.read_multiplier = write_multiplier, read_multiplier
        self._entries: dict[str, float] = {}  # prefix digest -> expiry time
        self.report = SimulationReport()

    def _prefixes(self, messages: Sequence[Message]) -> tuple[list[str], list[int], list[int]]:
        digests, totals, marks = [], [], []
        running, total = hashlib.blake2b(digest_size=16), 0
        for i, (identity, marked, text, first) in enumerate(_blocks(messages)):
            running.update(identity.encode("utf-8", "surrogatepass"))
            digests.append(running.copy().hexdigest())
            tokens = self.counter.count_text(text) if text is not None else IMAGE_FLAT_TOKENS
            total += tokens + (MESSAGE_OVERHEAD if first else 0)
            totals.append(total)
            if marked:
                marks.append(i)
        return digests, totals, marks

    def request(self, messages: Sequence[Message], now: float) -> RequestCost:
        """Send one request at time `now`; returns (and records) what it cost."""
        self._entries = {k: t for k, t in self._entries.items() if t >= now}
        digests, totals, marks = self._prefixes(messages)
        hit = -1
        for mark in marks:
            for j in range(mark, max(-1, mark - self.lookback), -1):
                if digests[j] in self._entries:
                    hit = max(hit, j)
                    break
        read = totals[hit] if hit >= 0 else 0
        if hit >= 0:
            self._entries[digests[hit]] = now + self.ttl
        written_to = read
        for mark in marks:
            if mark > hit and totals[mark] >= self.min_cacheable_tokens:
                self._entries[digests[mark]] = now + self.ttl
                written_to = max(written_to, totals[mark])
        prompt = totals[-1] if totals else 0
        write = written_to - read
        cost = (prompt - read - write) + write * self.write_multiplier + read * self.read_multiplier
        result = RequestCost(prompt, read, write, cost)
        self.report.requests.append(result)
        return result

    def snapshot(self) -> dict[str, Any]:
        return {"entries": len(self._entries), "requests": len(self.report.requests)}
