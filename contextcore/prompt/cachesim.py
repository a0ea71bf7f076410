"""A simulation of a provider's prompt cache under its rules, for benchmarking layouts.

A request is a sequence of content blocks (a string message is one text block;
`cache_control` does not change a block's identity). Under explicit rules (`CacheRules`)
each breakpoint whose prefix reaches the minimum writes that prefix, for the lifetime its
`cache_control` asks ("ttl": "1h", else 5 minutes) at that lifetime's premium; a later
request reads the longest written prefix it repeats exactly, found by looking back up to
`lookback` blocks from each of its breakpoints; every cached prefix the request marks is
used by it, so each is refreshed, not only the longest. Under automatic rules every block
boundary of every request is cached at no premium, and a request reads its longest cached
prefix, counted from the minimum in steps of the granularity. Entries live their
lifetime, refreshed on use, on the caller's fake clock. Cost is in input-token units:
uncached 1x, writes and reads at the rules' multipliers. Approximation: prefixes match at
block boundaries (a provider matching token by token may read a little more of the last
block). Non-goals: tools, output tokens.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from contextcore.llm import Message
from contextcore.prompt.cacherules import ANTHROPIC, CacheRules
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


def _blocks(messages: Sequence[Message]) -> Iterable[tuple[str, str | None, str | None, bool]]:
    """(identity, breakpoint ttl ("" for the default, None for no breakpoint), text (None
    for an image), first of its message) per block."""
    for message in messages:
        role, content = message.get("role", ""), message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for position, block in enumerate(blocks or []):
            identity = json.dumps(
                [role, {k: v for k, v in block.items() if k != "cache_control"}], sort_keys=True
            )
            text = block.get("text", "") if block.get("type") == "text" else None
            marker = block.get("cache_control")
            ttl = None if marker is None else str(marker.get("ttl") or "")
            yield identity, ttl, text, position == 0


@dataclass(frozen=True)
class _Prefixes:
    digests: list[str]
    totals: list[int]
    marks: list[tuple[int, str]]  # (block index, ttl) of each breakpoint


class CacheSimulator:
    def __init__(self, counter: TokenCounter, rules: CacheRules = ANTHROPIC) -> None:
        self.counter, self.rules = counter, rules
        self._entries: dict[str, tuple[float, float]] = {}  # prefix digest -> (expiry, ttl)
        self.report = SimulationReport()

    def _prefixes(self, messages: Sequence[Message]) -> _Prefixes:
        digests, totals, marks = [], [], []
        running, total = hashlib.blake2b(digest_size=16), 0
        for i, (identity, ttl, text, first) in enumerate(_blocks(messages)):
            running.update(identity.encode("utf-8", "surrogatepass"))
            digests.append(running.copy().hexdigest())
            tokens = self.counter.count_text(text) if text is not None else IMAGE_FLAT_TOKENS
            total += tokens + (MESSAGE_OVERHEAD if first else 0)
            totals.append(total)
            if ttl is not None:
                marks.append((i, ttl))
        return _Prefixes(digests, totals, marks)

    def request(self, messages: Sequence[Message], now: float) -> RequestCost:
        """Send one request at time `now`; returns (and records) what it cost."""
        self._entries = {k: e for k, e in self._entries.items() if e[0] >= now}
        found = self._prefixes(messages)
        prompt = found.totals[-1] if found.totals else 0
        if self.rules.kind == "explicit":
            read, write, cost = self._explicit(found, now)
        elif self.rules.kind == "automatic":
            read, write, cost = self._automatic(found, now)
        else:
            read, write, cost = 0, 0, 0.0
        result = RequestCost(prompt, read, write, cost + (prompt - read - write))
        self.report.requests.append(result)
        return result

    def _explicit(self, found: _Prefixes, now: float) -> tuple[int, int, float]:
        """(read, written, their cost) under breakpoint rules."""
        hit = -1
        for mark, _ in found.marks:
            for j in range(mark, max(-1, mark - self.rules.lookback), -1):
                if found.digests[j] in self._entries:
                    hit = max(hit, j)
                    break
        read = found.totals[hit] if hit >= 0 else 0
        # The request uses every cached prefix it marks, not only the longest it reads.
        for used in {hit, *(mark for mark, _ in found.marks)} - {-1}:
            if (entry := self._entries.get(found.digests[used])) is not None:
                self._entries[found.digests[used]] = (now + entry[1], entry[1])
        written_to, cost = read, read * self.rules.read_multiplier
        for mark, asked in found.marks:
            tokens = found.totals[mark]
            if mark > hit and tokens >= self.rules.min_tokens:
                ttl, multiplier = self.rules.lifetime(asked)
                self._entries[found.digests[mark]] = (now + ttl, ttl)
                if tokens > written_to:
                    cost += (tokens - written_to) * multiplier
                    written_to = tokens
        return read, written_to - read, cost

    def _automatic(self, found: _Prefixes, now: float) -> tuple[int, int, float]:
        """(read, 0, its cost) under automatic prefix rules: every prefix is kept."""
        hit = next(
            (j for j in range(len(found.digests) - 1, -1, -1) if found.digests[j] in self._entries),
            -1,
        )
        read = self.rules.cacheable(found.totals[hit]) if hit >= 0 else 0
        entry = (now + self.rules.ttl, self.rules.ttl)
        for digest in found.digests:
            self._entries[digest] = entry
        return read, 0, read * self.rules.read_multiplier

    def snapshot(self) -> dict[str, Any]:
        return {"entries": len(self._entries), "requests": len(self.report.requests)}
