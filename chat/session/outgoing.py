"""What leaves for the model provider: every text part redacted, and the person told where.

Every request of a session (the chat's, its tool rounds, the side requests that reuse its
prefix, keep-alive refreshes) goes through `client()`, which replaces credential-shaped
values in every text part by a marker naming the kind (`chat.repo.credentials.redact`)
before the request leaves, and every copy of such a value anywhere in the request, as is,
base64, hex or URL-encoded (`chat.repo.secretvalues.Copies`). The same request always
redacts to the same bytes, so the chat and its side requests still share their cached
prefix (an earlier message changes only when a later one first shows a value it holds a
copy of). `findings` says, per file or section of a prepared prompt, what kinds it held,
so the turn can warn before its request goes.
The stored conversation and the files on disk keep what the person wrote; only what is
sent changes. Non-goals: which shapes count (chat.repo.credentials), the notices' storage.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from chat.repo import credentials, secretvalues
from contextcore import objectview
from contextcore.llm import LLMClient, LLMRequest, StreamEvent
from contextcore.manager import PreparedPrompt

# A prompt's sections (contextcore.prompt.assembly) as a warning names them; files and
# active tool outputs are named one by one, the conversation's user turns when they are new.
SECTIONS = MappingProxyType(
    {
        "system": "The system prompt holds",
        "instructions": "The project instructions hold",
        "repo_map": "The repository map holds",
        "reference_files": "The related context from earlier sessions holds",
        "metadata": "The list of other context objects holds",
        "history": "Earlier replies or tool results of this conversation hold",
        "current_message": "Your message holds",
    }
)


@dataclass(frozen=True)
class Finding:
    where: str  # a path, or a section's key in SECTIONS
    kinds: tuple[str, ...]
    section: str = "files"  # files | map | a key of SECTIONS

    def text(self) -> str:
        named = credentials.named(self.kinds)
        if self.section == "files":
            return credentials.warning(self.where, list(self.kinds))
        if self.section == "map":
            return (
                f"{self.where} holds what looks like {named}; the repository map shows its "
                "constants without their values."
            )
        return (
            f"{SECTIONS.get(self.section, self.section)} what looks like {named}; it is sent "
            "to the model provider as [redacted: …] in its place, never as itself."
        )


class Guarded:
    """An `LLMClient` that redacts every request before handing it to `inner`."""

    def __init__(self, inner: LLMClient) -> None:
        self.inner = inner

    def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        # The inner stream itself, not a generator passing each event on.
        return self.inner.stream(redacted(request))


def client(inner: LLMClient) -> LLMClient:
    """The client a session's requests leave through: `inner`, guarded."""
    return inner if isinstance(inner, Guarded) else Guarded(inner)


def redacted(request: LLMRequest) -> LLMRequest:
    """`request` with each credential-shaped value in its messages replaced by a marker,
    and every copy of such a value anywhere in the request (`secretvalues.Copies`); the
    same object when there is none."""
    values: dict[str, str] = {}
    for text in _texts(request.messages):
        values.update((text[b:e], marker) for b, e, marker in credentials.spans(text))
    copies = secretvalues.Copies.of(values)

    def redact(text: str) -> str:
        return copies.redact(credentials.redact(text).text)

    messages = [_message(m, redact) for m in request.messages]
    if all(new is old for new, old in zip(messages, request.messages, strict=True)):
        return request
    return replace(request, messages=messages)


def _texts(messages: Iterable[Mapping[str, Any]]) -> Iterable[str]:
    """Every text a request's messages send: contents, text parts, tool-call arguments."""
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            yield content
        elif isinstance(content, list):
            yield from (p["text"] for p in content if isinstance(p, dict) and _is_text(p))
        for call in message.get("tool_calls") or ():
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and isinstance(function.get("arguments"), str):
                yield function["arguments"]


def _is_text(part: Mapping[str, Any]) -> bool:
    return isinstance(part.get("text"), str)


def _message(message: Mapping[str, Any], redact: Callable[[str], str]) -> Any:
    content = message.get("content")
    changed: dict[str, Any] = {}
    if isinstance(content, str):
        text = redact(content)
        if text != content:
            changed["content"] = text
    elif isinstance(content, list):
        parts = [_part(p, redact) for p in content]
        if any(new is not old for new, old in zip(parts, content, strict=True)):
            changed["content"] = parts
    calls = message.get("tool_calls")
    if calls:
        redone = [_call(c, redact) for c in calls]
        if any(new is not old for new, old in zip(redone, calls, strict=True)):
            changed["tool_calls"] = redone
    return {**message, **changed} if changed else message


def _part(part: Any, redact: Callable[[str], str]) -> Any:
    if isinstance(part, dict) and _is_text(part):
        text = redact(part["text"])
        return part if text == part["text"] else {**part, "text": text}
    return part


def _call(call: Any, redact: Callable[[str], str]) -> Any:
    function = call.get("function") if isinstance(call, dict) else None
    arguments = function.get("arguments") if isinstance(function, dict) else None
    if not isinstance(arguments, str):
        return call
    text = redact(arguments)
    return call if text == arguments else {**call, "function": {**function, "arguments": text}}


# -- what the person is told ---------------------------------------------------------------


def findings(files: Iterable[tuple[str, str]], prompt: PreparedPrompt) -> list[Finding]:
    """Each working file (or active tool output) and each other section of `prompt` that
    holds a credential, with its kinds; a file the map or its outline shows with a
    credential's marker for a value counts too (a tool output says so itself)."""
    found = []
    for key, content in files:
        kinds = set(credentials.kinds_in(content))
        if not objectview.is_active_label(key):
            kinds |= set(credentials.marked_kinds(content))
        if kinds:
            found.append(Finding(key, _ordered(kinds)))
    found += _map_findings(prompt)
    by_section: dict[str, set[str]] = {}
    for section, text, role in _section_texts(prompt):
        if section == "history" and role == "user":
            continue  # said when it was the person's message
        kinds = credentials.kinds_in(text)
        if kinds:
            by_section.setdefault(section, set()).update(kinds)
    found += [Finding(s, _ordered(kinds), s) for s, kinds in by_section.items()]
    return found


def _ordered(kinds: Iterable[str]) -> tuple[str, ...]:
    kinds = set(kinds)
    return tuple(k for k in credentials.KINDS if k in kinds)


def _section_texts(prompt: PreparedPrompt) -> Iterable[tuple[str, str, str]]:
    """(section, text, role) of every text the prompt sends but the working files."""
    for block in prompt.chunks.blocks:
        for chunk in block.chunks:
            role = str(chunk.message.get("role", ""))
            if chunk.parts:
                for section, text in chunk.parts:
                    if section != "active_files":
                        yield section, text, role
            elif chunk.section != "active_files":
                yield chunk.section, _text(chunk.message.get("content")), role


def _map_findings(prompt: PreparedPrompt) -> list[Finding]:
    """Files whose constants the map shows with a credential's marker for a value: the
    map is a list of `path:` lines, each followed by its indented signatures."""
    kinds_by_path: dict[str, set[str]] = {}
    for section, text, _ in _section_texts(prompt):
        if section != "repo_map" or "[redacted: " not in text:
            continue
        path = ""
        for line in text.splitlines():
            if line.endswith(":") and not line.startswith(" "):
                path = line[:-1]
            elif path and line.startswith(" "):
                kinds_by_path.setdefault(path, set()).update(credentials.marked_kinds(line))
    return [Finding(p, _ordered(k), "map") for p, k in sorted(kinds_by_path.items()) if k]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""
