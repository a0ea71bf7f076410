"""Token counts and block keys for the wire fakes: cl100k over a canonical serialisation.

A block (a tool definition, a system block, a message's content block, an OpenAI message)
is written as sorted-key compact JSON without its `cache_control` marker, so two requests
that differ only in where the markers sit have the same blocks. Its tokens are cl100k's
count of that text (offline: the encodings litellm ships, found without importing it);
an image counts a fixed IMAGE_TOKENS whatever its size. This is an approximation of each
provider's own tokenizer, the same for every layout the benchmark compares.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from chat.llm.environment import configure_offline_environment

IMAGE_TOKENS = 1_600  # about what Anthropic documents for a 1092x1092 image
_IMAGE_TYPES = ("image", "image_url")


def without_markers(value: Any) -> Any:
    """`value` with every `cache_control` key removed, at any depth."""
    if isinstance(value, dict):
        return {k: without_markers(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_markers(v) for v in value]
    return value


def canonical(value: Any) -> str:
    return json.dumps(without_markers(value), sort_keys=True, separators=(",", ":"))


def is_image(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") in _IMAGE_TYPES


def has_image(value: Any) -> bool:
    if is_image(value):
        return True
    if isinstance(value, dict):
        return any(has_image(v) for v in value.values())
    if isinstance(value, list):
        return any(has_image(v) for v in value)
    return False


@functools.cache
def _encoding() -> Any:
    configure_offline_environment()
    import tiktoken  # lazy: loading the encoding reads a file

    return tiktoken.get_encoding("cl100k_base")


@functools.lru_cache(maxsize=65_536)
def encode(text: str) -> tuple[int, ...]:
    return tuple(_encoding().encode(text, disallowed_special=()))


def count(text: str) -> int:
    return len(encode(text))


def block_tokens(block: Any) -> int:
    """Tokens of one block: its canonical text, images at a flat rate."""
    if is_image(block):
        return IMAGE_TOKENS
    if isinstance(block, dict) and has_image(block):
        images = sum(1 for v in _walk(block) if is_image(v))
        return images * IMAGE_TOKENS + count(canonical(_strip_images(block)))
    return count(canonical(block))


def _walk(value: Any) -> list[Any]:
    found = [value]
    if isinstance(value, dict):
        for v in value.values():
            found.extend(_walk(v))
    elif isinstance(value, list):
        for v in value:
            found.extend(_walk(v))
    return found


def _strip_images(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_images(v) for k, v in value.items() if not is_image(v)}
    if isinstance(value, list):
        return [_strip_images(v) for v in value if not is_image(v)]
    return value
