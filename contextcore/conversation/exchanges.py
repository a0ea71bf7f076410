"""Conversation history helpers: entries, exchanges, the sliding window, truncation.

An exchange is a user message with the assistant messages that follow it (a leading
assistant message forms an exchange of its own). Invariant: every function here keeps or
drops whole exchanges, never half of a user/assistant pair. The window keeps the first
exchange when it fits and says how many messages it left out with seed 002's "[N earlier
messages omitted for brevity]", as a user/assistant pair. Non-goal: summarising what was
dropped (that is the compactor's job).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from contextcore.llm import Message
from contextcore.tokens import TokenCounter


def history_entry(message: Mapping[str, Any]) -> Message:
    """Role and content, plus the annotations the engine keeps: the stored message id and
    the pin. Anything else a caller hands in is dropped."""
    entry: Message = {"role": message["role"], "content": message["content"]}
    if message.get("id"):
        entry["id"] = str(message["id"])
    if message.get("pinned"):
        entry["pinned"] = True
    return entry


def omission_marker(count: int) -> list[Message]:
    # A user/assistant pair rather than seed 002's system message: providers hoist system
    # messages to the top of the prompt, which would break the cached prefix.
    return [
        {"role": "user", "content": f"[{count} earlier messages omitted for brevity]"},
        {"role": "assistant", "content": "Understood."},
    ]


def group_exchanges(messages: Sequence[Message]) -> list[list[Message]]:
    groups: list[list[Message]] = []
    for message in messages:
        if message.get("role") == "user" or not groups:
            groups.append([message])
        else:
            groups[-1].append(message)
    return groups


def window_history(
    messages: Sequence[Message], max_tokens: int, counter: TokenCounter
) -> list[Message]:
    """The first exchange (when it fits), an omission marker, and as many recent whole
    exchanges as fit in `max_tokens` in total."""
    if counter.count(list(messages)) <= max_tokens:
        return list(messages)
    groups = group_exchanges(messages)
    room = max_tokens - counter.count(omission_marker(len(messages)))
    if room < 0:
        return []
    first: list[Message] = []
    if groups[0][0].get("role") == "user" and counter.count(groups[0]) <= room:
        first = groups[0]
        room -= counter.count(first)
    recent: list[Message] = []
    for group in reversed(groups[1:] if first else groups):
        size = counter.count(group)
        if size > room:
            break
        recent = group + recent
        room -= size
    omitted = len(messages) - len(first) - len(recent)
    return first + (omission_marker(omitted) if omitted else []) + recent


def drop_oldest_exchanges(
    messages: Sequence[Message], target_tokens: int, counter: TokenCounter
) -> list[Message]:
    """Drop whole exchanges from the start until the rest fits `target_tokens`; the last
    exchange always stays (it is what the next message answers)."""
    groups = group_exchanges(messages)
    total = counter.count(list(messages))
    while len(groups) > 1 and total > target_tokens:
        total -= counter.count(groups.pop(0))
    return [m for group in groups for m in group]
