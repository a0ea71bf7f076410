"""Anthropic's prompt caching as its documentation describes it, for the Messages API fake.

The prompt is a sequence of blocks in the order tools -> system -> messages; each block
can carry a `cache_control` breakpoint (at most MAX_BREAKPOINTS, else a 400). A cache
entry is the exact prefix up to and including a breakpoint's block, for one model; it is
written only when that prefix has at least the model's minimum cacheable length, lives 5
minutes (or 1 hour with `ttl: "1h"`) and is renewed whenever it is read. Each breakpoint
looks for an entry at its own block and the LOOKBACK - 1 blocks before it; the longest hit
is read, and every breakpoint past it is written. Tool choice and whether the prompt has
images are part of every message block's prefix, so changing either invalidates the
message blocks but not tools or system; a change in tools changes every prefix.
Written from the documentation, independently of contextcore's simulator. Non-goals:
thinking parameters, the automatic top-level `cache_control`, eviction before expiry.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from typing import Any

from bench.wirefakes.tokens import block_tokens, canonical, has_image

MAX_BREAKPOINTS = 4
LOOKBACK = 20
LIFETIMES = {"5m": 300.0, "1h": 3600.0}
# Minimum cacheable prompt per model family (the first matching fragment decides).
MINIMUM_TOKENS: tuple[tuple[str, int], ...] = (
    ("opus-4-5", 4096),
    ("haiku-4-5", 4096),
    ("haiku", 2048),  # Claude Haiku 3 and 3.5
)
DEFAULT_MINIMUM = 1024


class CacheRequestError(ValueError):
    """A request Anthropic refuses with a 400 invalid_request_error."""


def minimum_tokens(model: str) -> int:
    for fragment, tokens in MINIMUM_TOKENS:
        if fragment in model:
            return tokens
    return DEFAULT_MINIMUM


@dataclass(frozen=True)
class Block:
    section: str  # "tools", "system" or "messages"
    key: str  # canonical text, markers removed
    tokens: int
    ttl: str | None  # the breakpoint's lifetime, None when the block is no breakpoint


@dataclass(frozen=True)
class CacheUsage:
    input_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    creation_5m: int
    creation_1h: int

    def as_usage(self, output_tokens: int) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation": {
                "ephemeral_5m_input_tokens": self.creation_5m,
                "ephemeral_1h_input_tokens": self.creation_1h,
            },
            "output_tokens": output_tokens,
        }


def blocks_of(body: dict[str, Any]) -> list[Block]:
    """The request's blocks in cache order: tools, system, then every message's content."""
    blocks = [_block("tools", tool, tool) for tool in body.get("tools") or []]
    system = body.get("system")
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    blocks += [_block("system", part, part) for part in system or []]
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for part in content or []:
            blocks.append(_block("messages", part, {"role": message.get("role"), "block": part}))
    return blocks


def _block(section: str, marked: Any, keyed: Any) -> Block:
    control = marked.get("cache_control") if isinstance(marked, dict) else None
    ttl = None
    if isinstance(control, dict):
        ttl = control.get("ttl") or "5m"
        if ttl not in LIFETIMES:
            raise CacheRequestError(f"cache_control.ttl: Input should be '5m' or '1h', got {ttl!r}")
    return Block(section, canonical(keyed), block_tokens(marked), ttl)


class AnthropicCache:
    """The entries one organisation's cache holds; thread-safe."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[float, str]] = {}  # prefix hash -> (expires, ttl)
        self._lock = threading.Lock()

    def process(self, body: dict[str, Any], now: float) -> CacheUsage:
        """What `body` reads and writes at `now`; raises CacheRequestError for a 400."""
        blocks = blocks_of(body)
        breakpoints = [i for i, block in enumerate(blocks) if block.ttl]
        _check_breakpoints(blocks, breakpoints)
        keys = _prefix_keys(body, blocks)
        ends = _running_totals(blocks)
        minimum = minimum_tokens(str(body.get("model", "")))
        with self._lock:
            hit = self._longest_hit(keys, breakpoints, now)
            read = ends[hit] if hit >= 0 else 0
            if hit >= 0:  # a read renews the entry it read
                kept = self._entries[keys[hit]][1]
                self._entries[keys[hit]] = (now + LIFETIMES[kept], kept)
            written = {"5m": 0, "1h": 0}
            covered = read
            for b in breakpoints:
                if b <= hit or ends[b] < minimum:
                    continue
                ttl = blocks[b].ttl or "5m"
                self._entries[keys[b]] = (now + LIFETIMES[ttl], ttl)
                written[ttl] += ends[b] - covered
                covered = ends[b]
        total = ends[-1] if ends else 0
        creation = written["5m"] + written["1h"]
        return CacheUsage(total - read - creation, read, creation, written["5m"], written["1h"])

    def _longest_hit(self, keys: list[str], breakpoints: list[int], now: float) -> int:
        hit = -1
        for b in breakpoints:
            for j in range(b, max(-1, b - LOOKBACK), -1):
                entry = self._entries.get(keys[j])
                if entry is not None and entry[0] > now:
                    hit = max(hit, j)
                    break
        return hit

    def entries(self, now: float) -> int:
        with self._lock:
            return sum(1 for expires, _ in self._entries.values() if expires > now)


def _check_breakpoints(blocks: list[Block], breakpoints: list[int]) -> None:
    if len(breakpoints) > MAX_BREAKPOINTS:
        raise CacheRequestError(
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {len(breakpoints)}."
        )
    seen_short = False
    for b in breakpoints:
        if blocks[b].ttl == "5m":
            seen_short = True
        elif seen_short:
            raise CacheRequestError(
                "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block"
            )


def _prefix_keys(body: dict[str, Any], blocks: list[Block]) -> list[str]:
    """A hash of each prefix: the model, every block up to it, and for message blocks the
    tool choice and whether the prompt holds an image."""
    digest = hashlib.sha256(canonical({"model": body.get("model")}).encode())
    keys = []
    entered_messages = False
    for block in blocks:
        if block.section == "messages" and not entered_messages:
            entered_messages = True
            context = {"tool_choice": body.get("tool_choice"), "images": has_image(body)}
            digest.update(canonical(context).encode())
        digest.update(b"\x00" + block.section.encode() + b"\x00" + block.key.encode())
        keys.append(digest.copy().hexdigest())
    return keys


def _running_totals(blocks: list[Block]) -> list[int]:
    totals, running = [], 0
    for block in blocks:
        running += block.tokens
        totals.append(running)
    return totals
