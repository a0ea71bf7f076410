"""Helpers of the prompt-layout tests: a message's text, and a turn as the chat makes one
(the request at `now`, then the exchange recorded)."""

from __future__ import annotations

from typing import Any

BODY = "".join(f"def function_{i}(value):\n    return value * {i}\n\n" for i in range(120))


def text(message: dict[str, Any]) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def texts(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(role, text) of each message: what a request says, whatever its cache markers."""
    return [(m["role"], text(m)) for m in messages]


def turn(manager, question: str, now: float, words: int = 80) -> list[dict[str, Any]]:
    """The request `manager` sends for `question` at `now`; the answer is recorded."""
    messages = manager.prepare_request(question, now=now).messages
    manager.record_exchange(question, f"The answer to {question}, " + "in detail " * words)
    return messages


def selecting(make_manager, root, files: dict[str, str], **config):
    """A manager on `root` with `files` written there and selected, in that order."""
    for name, content in files.items():
        (root / name).write_text(content)
    manager = make_manager(repo_root=root, **config)
    for name in files:
        assert manager.file_context.add_file(name).ok
    return manager
