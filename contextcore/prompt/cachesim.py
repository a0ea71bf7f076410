"""A simulation of a provider's prompt cache under its documented rules.

A request is a sequence of content blocks in the order the provider caches them: the tool
definitions (one block each), then the system blocks (hoisted to the front under explicit
rules, as Anthropic's API takes them apart from the messages), then the message blocks (a
string message is one text block; `cache_control` does not change a block's identity).
So a change in tools changes every prefix after it. Before the first message block the
prefix also takes in the tool choice and whether the request holds any image: Anthropic
documents that changing either invalidates the message blocks, not tools or system.
A request with more breakpoints than the rules allow is refused, as the API refuses it
(`TooManyBreakpoints`). Under explicit rules (`CacheRules`)
each breakpoint whose prefix reaches the minimum writes that prefix, for the lifetime its
`cache_control` asks ("ttl": "1h", else 5 minutes) at that lifetime's premium; a later
request reads the longest written prefix it repeats exactly, found by looking back up to
`lookback` blocks from each of its breakpoints; a cached prefix is renewed only when it
is the one a request reads (see `_explicit`). Under automatic rules every block
boundary of every request is cached at no premium, and a request reads its longest cached
prefix, counted from the minimum in steps of the granularity. Entries live their
lifetime, refreshed on use, on the caller's fake clock. Cost is in input-token units:
uncached 1x, writes and reads at the rules' multipliers. Approximation: prefixes match at
block boundaries (a provider matching token by token may read a little more of the last
block). Non-goals: output tokens, the provider's hidden tool-use system prompt.
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


class TooManyBreakpoints(ValueError):
    """More `cache_control` blocks than the provider accepts in one request."""


# (identity, breakpoint ttl ("" for the default, None for no breakpoint), what it counts: a
# message block's text (None for an image) or a tool definition, first of its message).
_Block = tuple[str, str | None, str | dict[str, Any] | None, bool]


def _tool_blocks(tools: Sequence[dict[str, Any]]) -> Iterable[_Block]:
    """One block per tool definition, counted as `count_tool` does (a tool may be marked)."""
    for tool in tools:
        plain = {k: v for k, v in tool.items() if k != "cache_control"}
        marker = tool.get("cache_control")
        ttl = None if marker is None else str(marker.get("ttl") or "")
        yield json.dumps(["tool", plain], sort_keys=True), ttl, plain, False


def _has_image(messages: Sequence[Message]) -> bool:
    return any(
        isinstance(block, dict) and block.get("type") != "text"
        for message in messages
        if isinstance(message.get("content"), list)
        for block in message["content"]
    )


def _blocks(messages: Sequence[Message]) -> Iterable[_Block]:
    """One `_Block` per content block of each message."""
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


def _longest(digests: Sequence[str], known) -> int:
    """The index of the longest prefix whose digest is in `known`, or -1."""
    return next((j for j in range(len(digests) - 1, -1, -1) if digests[j] in known), -1)


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

    def _ordered(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]
    ) -> Iterable[_Block | None]:
        """The blocks in the order the provider caches them; None marks where the message
        blocks begin (what invalidates only them is hashed there)."""
        yield from _tool_blocks(tools)
        if self.rules.kind == "explicit":  # Anthropic's `system` comes before the messages
            yield from _blocks([m for m in messages if m.get("role") == "system"])
            messages = [m for m in messages if m.get("role") != "system"]
        yield None
        yield from _blocks(messages)

    def _prefixes(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        tool_choice: Any = None,
    ) -> _Prefixes:
        digests, totals, marks = [], [], []
        running, total = hashlib.blake2b(digest_size=16), 0
        switches = json.dumps([tool_choice, _has_image(messages)], sort_keys=True, default=str)
        for block in self._ordered(messages, tools):
            if block is None:
                running.update(switches.encode())
                continue
            identity, ttl, text, first = block
            i = len(digests)
            running.update(identity.encode("utf-8", "surrogatepass"))
            digests.append(running.copy().hexdigest())
            total += self._tokens(text) + (MESSAGE_OVERHEAD if first else 0)
            totals.append(total)
            if ttl is not None:
                marks.append((i, ttl))
        return _Prefixes(digests, totals, marks)

    def _tokens(self, counted: str | dict[str, Any] | None) -> int:
        if isinstance(counted, dict):
            return self.counter.count_tool(counted)
        return IMAGE_FLAT_TOKENS if counted is None else self.counter.count_text(counted)

    def request(
        self,
        messages: Sequence[Message],
        now: float,
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: Any = None,
    ) -> RequestCost:
        """Send one request at time `now` with `tools` (and `tool_choice`) beside its
        messages; returns (and records) what it cost."""
        self._entries = {k: e for k, e in self._entries.items() if e[0] >= now}
        found = self._prefixes(messages, tools or (), tool_choice)
        if self.rules.kind == "explicit" and len(found.marks) > self.rules.max_breakpoints:
            raise TooManyBreakpoints(
                f"A maximum of {self.rules.max_breakpoints} blocks with cache_control may be "
                f"provided. Found {len(found.marks)}."
            )
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
        # A read renews the entry it read. A shorter cached prefix the request also marks
        # is not renewed: the provider documents a refresh when cached content is used, and
        # whether reading a longer entry uses a shorter one is not documented: the simulator
        # takes the reading that costs more, as the wire fakes do.
        if hit >= 0 and (entry := self._entries.get(found.digests[hit])) is not None:
            self._entries[found.digests[hit]] = (now + entry[1], entry[1])
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
        hit = _longest(found.digests, self._entries)
        read = self.rules.cacheable(found.totals[hit]) if hit >= 0 else 0
        entry = (now + self.rules.ttl, self.rules.ttl)
        for digest in found.digests:
            self._entries[digest] = entry
        return read, 0, read * self.rules.read_multiplier

    def lowest_cost(self, requests: Iterable[tuple[Sequence[Message], Any]]) -> float:
        """The least any cache layout could charge for these (messages, tools) requests,
        in order: a block is read (at the read price) only if an earlier request sent the
        same prefix through it; every other token costs at least the full price. Lifetimes,
        minimums and breakpoint limits are ignored, so no layout of the same requests can
        cost less. It measures the requests' own content, not how they are marked."""
        seen: set[str] = set()
        cost = 0.0
        for messages, tools in requests:
            found = self._prefixes(messages, tools or ())
            hit = _longest(found.digests, seen)
            read = found.totals[hit] if hit >= 0 else 0
            prompt = found.totals[-1] if found.totals else 0
            cost += read * self.rules.read_multiplier + (prompt - read)
            seen.update(found.digests)
        return cost

    def snapshot(self) -> dict[str, Any]:
        return {"entries": len(self._entries), "requests": len(self.report.requests)}
