"""Token counting: model-aware, cached by content hash, never failing.

`TokenCounter` wraps one tiktoken encoding. Counts of strings are cached by a hash of the
text, so an unchanged file or message is never tokenized twice. Any tokenizer error falls
back to ~4 characters per token. The encoding files must already be on disk (the caller
points TIKTOKEN_CACHE_DIR at them); nothing is downloaded. Image tokens come from the
provider's published pixel formula (`count_image`), not a flat number.
Non-goal: exact counts for non-OpenAI tokenizers; cl100k_base is a close-enough proxy.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

CHARS_PER_TOKEN = 4
# Framing tokens per chat message (role, separators), as OpenAI documents for its models.
MESSAGE_OVERHEAD = 4
# What `count` charges for an image block it cannot see the size of; callers that know the
# pixel size replace it with `count_image`.
IMAGE_FLAT_TOKENS = 85
# What `encoding_for_model` answers for any model tiktoken does not know (Claude, Llama,
# Gemini, ...): a close-enough proxy whose file litellm ships.
FALLBACK_ENCODING = "cl100k_base"
# Framing tokens per tool definition (name, schema wrapper) beside its JSON text.
TOOL_OVERHEAD = 16


def estimate_tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def encoding_for_model(model_name: str) -> str:
    """The tiktoken encoding that best approximates `model_name` ("openai/gpt-4o" -> o200k):
    o200k_base for the models tiktoken's own table gives an o200k encoding (gpt-oss's
    o200k_harmony has the same ordinary tokens), cl100k_base for everything else."""
    # Lazy, like the encoding below: importing tiktoken costs tens of milliseconds that
    # importers of contextcore's types alone should not pay. The name table needs no file.
    import tiktoken

    name = model_name.lower().rsplit("/", 1)[-1]
    try:
        encoding = tiktoken.encoding_name_for_model(name)
    except KeyError:
        return FALLBACK_ENCODING
    return "o200k_base" if encoding.startswith("o200k") else FALLBACK_ENCODING


def provider_for_model(model_name: str) -> str:
    """ "anthropic" for Claude models (any route), otherwise "openai" (the common image rule)."""
    name = model_name.lower()
    return "anthropic" if "claude" in name or name.startswith("anthropic/") else "openai"


def count_image(width: int, height: int, provider: str) -> int:
    """Input tokens of one image of `width` x `height` pixels, by the provider's formula."""
    width, height = max(1, int(width)), max(1, int(height))
    if provider == "anthropic":
        # Anthropic scales images to fit a 1568 px long side and ~1.15 megapixels,
        # then charges width * height / 750.
        scale = min(1.0, 1568 / max(width, height), math.sqrt(1_150_000 / (width * height)))
        w, h = int(width * scale), int(height * scale)
        return max(1, math.ceil(w * h / 750))
    # OpenAI high detail: fit in 2048x2048, shortest side down to 768, then 170 per
    # 512 px tile plus 85.
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = w * scale, h * scale
    return 170 * math.ceil(w / 512) * math.ceil(h / 512) + 85


# The cache is keyed by the text itself: Python caches a string's hash on the object, so an
# unchanged file or message (the same object turn after turn) costs one dict lookup, and an
# equal string from elsewhere costs one hash and one comparison -- never a re-tokenization.
# Bounded by total characters held, then cleared (counts are cheap to rebuild in batches).
MAX_CACHED_CHARS = 256_000_000


class TokenCounter:
    def __init__(self, encoding_name: str = "cl100k_base") -> None:
        self.encoding_name = encoding_name
        self._encoding: Any = None
        self._failed = False
        self._cache: dict[str, int] = {}
        self._cached_chars = 0

    @property
    def encoding(self) -> Any:
        """The tiktoken encoding, or None when it could not be loaded (counts estimate)."""
        return self._get_encoding()

    def _get_encoding(self) -> Any:
        if self._encoding is None and not self._failed:
            try:
                # Lazy: importing tiktoken costs tens of milliseconds, and loading the
                # encoding reads its file; a process that never counts pays for neither.
                import tiktoken

                self._encoding = tiktoken.get_encoding(self.encoding_name)
            except Exception:
                self._failed = True
        return self._encoding

    @property
    def uses_fallback(self) -> bool:
        """True when the tokenizer could not load and counts are ~4 chars/token estimates."""
        return self._get_encoding() is None

    def count_text(self, text: str) -> int:
        if not text:
            return 0
        cached = self._cache.get(text)
        if cached is not None:
            return cached
        encoding = self._get_encoding()
        try:
            n = len(encoding.encode_ordinary(text)) if encoding else estimate_tokens(text)
        except Exception:
            n = estimate_tokens(text)
        self._remember(text, n)
        return n

    def _remember(self, text: str, n: int) -> None:
        if self._cached_chars + len(text) > MAX_CACHED_CHARS:
            self._cache.clear()
            self._cached_chars = 0
        self._cache[text] = n
        self._cached_chars += len(text)

    def count_many(self, texts: Sequence[str], *, remember: bool = True) -> list[int]:
        """Count many texts at once (e.g. every file of a repository), tokenizing misses in
        one multi-threaded batch. Same results as `count_text` on each. With
        `remember=False` the texts are not kept in the cache (a caller with a cache of its
        own, by content hash, counting more text than is worth holding in memory)."""
        missing = {t: t for t in texts if t and t not in self._cache}
        if not missing:
            return [self.count_text(t) for t in texts]
        encoding = self._get_encoding()
        batch = list(missing)
        try:
            if encoding is None:
                raise LookupError(self.encoding_name)
            counts = [len(e) for e in encoding.encode_ordinary_batch(batch, num_threads=2)]
        except Exception:
            counts = [estimate_tokens(t) for t in batch]
        fresh = dict(zip(batch, counts, strict=True))
        if remember:
            for text, n in fresh.items():
                self._remember(text, n)
        return [fresh[t] if t in fresh else self.count_text(t) for t in texts]

    def count(self, value: str | dict[str, Any] | list[Any] | None) -> int:
        """Count a string, one chat message dict, or a list of either."""
        if value is None:
            return 0
        if isinstance(value, str):
            return self.count_text(value)
        if isinstance(value, list):
            return sum(self.count(item) for item in value)
        if isinstance(value, dict):
            return MESSAGE_OVERHEAD + self._count_content(value.get("content"))
        return self.count_text(json.dumps(value, default=str))

    def count_tool(self, tool: dict[str, Any]) -> int:
        """One tool definition: its JSON text (keys sorted, any cache marker left out) plus
        framing. The one rule for tools, so a request's size, its cached prefixes and the
        dry-run report agree."""
        plain = {k: v for k, v in tool.items() if k != "cache_control"}
        return self.count_text(json.dumps(plain, sort_keys=True)) + TOOL_OVERHEAD

    def _count_content(self, content: Any) -> int:
        if content is None:
            return 0
        if isinstance(content, str):
            return self.count_text(content)
        total = 0
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                total += self.count_text(block.get("text", ""))
            elif isinstance(block, dict):
                total += IMAGE_FLAT_TOKENS
        return total
