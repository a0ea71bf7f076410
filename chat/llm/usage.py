"""Usage as acdc counts it: contextcore `Usage` from what a provider (or litellm) reported.

`normalize_usage` reads any provider's usage fields, cache reads and writes included;
`merged` joins a usage reported in parts; `keep_usage_chunks` keeps litellm's stream
wrapper from holding every chunk, and `counted` counts the completion from the text when
the provider did not. Non-goals: prices and cost (`chat.llm.facts`, contextcore).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import Any

from contextcore.llm import StreamEvent, TextDelta, Usage, UsageReport


def merged(earlier: Usage | None, later: Usage) -> Usage:
    """The usage of a stream that reports it in parts: Anthropic counts the prompt and the
    cache in its first event and the completion in its last; a later zero is no news."""
    if earlier is None:
        return later
    return Usage(
        prompt_tokens=later.prompt_tokens or earlier.prompt_tokens,
        completion_tokens=later.completion_tokens or earlier.completion_tokens,
        cache_read_tokens=later.cache_read_tokens or earlier.cache_read_tokens,
        cache_write_tokens=later.cache_write_tokens or earlier.cache_write_tokens,
    )


class _UsageChunks(list):
    """What litellm's stream wrapper keeps of the chunks it returned (`response.chunks`):
    the first, the last two (its repetition check compares them) and those that carry
    usage. It keeps them to build the whole response again when the stream ends, for its
    logging, caching and usage; acdc reads only the usage, and building from every chunk
    cost more CPU than the rest of the stream (pydantic attribute misses, several passes).
    `reported` says whether the provider counted the completion itself."""

    reported = False

    def append(self, chunk: Any) -> None:
        super().append(chunk)
        usage = getattr(chunk, "usage", None)
        if usage is not None and _field(usage, "completion_tokens"):
            self.reported = True
        if len(self) > 3 and getattr(self[-3], "usage", None) is None:
            del self[-3]


def keep_usage_chunks(response: Any) -> Any:
    chunks = getattr(response, "chunks", None)
    if type(chunks) is not list:
        return None
    kept = _UsageChunks(chunks)
    response.chunks = kept
    return kept


async def counted(
    events: AsyncIterator[StreamEvent], count: Callable[[str], int], kept: Any
) -> AsyncIterator[StreamEvent]:
    """`events`, with the completion tokens counted from the text (`count`, the model's
    tokenizer) when the provider did not count them (litellm would have, from the chunks
    `_UsageChunks` lets go); `kept` says whether it did (`reported`), or is None when there
    is no telling."""
    texts: list[str] = []
    async for event in events:
        if isinstance(event, TextDelta):
            texts.append(event.text)
        elif isinstance(event, UsageReport) and kept is not None and not kept.reported and texts:
            text = "".join(texts)
            event = UsageReport(replace(event.usage, completion_tokens=int(count(text))))
        yield event


def _field(source: Any, name: str) -> Any:
    if source is None:
        return None
    if isinstance(source, dict):
        return source.get(name)
    return getattr(source, name, None)


def normalize_usage(raw: Any) -> Usage:
    """Provider usage (a litellm Usage or a dict) as contextcore `Usage`.

    Anthropic reports `cache_read_input_tokens` / `cache_creation_input_tokens`; OpenAI
    and DeepSeek report reads as `prompt_tokens_details.cached_tokens`. litellm already
    counts cached tokens inside `prompt_tokens`; the max() guards a provider that does not.
    """
    details = _field(raw, "prompt_tokens_details")
    cache_read = _field(raw, "cache_read_input_tokens") or _field(details, "cached_tokens") or 0
    cache_write = (
        _field(raw, "cache_creation_input_tokens") or _field(details, "cache_write_tokens") or 0
    )
    prompt = _field(raw, "prompt_tokens") or 0
    return Usage(
        prompt_tokens=max(int(prompt), int(cache_read) + int(cache_write)),
        completion_tokens=int(_field(raw, "completion_tokens") or 0),
        cache_read_tokens=int(cache_read),
        cache_write_tokens=int(cache_write),
    )
