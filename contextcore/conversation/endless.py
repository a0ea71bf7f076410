"""Endless mode (seed 004): a smaller model rewrites old history into one managed summary.

Each turn `build_managed_view` renders a context template with the last `recent_runs` runs
(a run is a user message with the replies after it) and the new message, asks the manager
model once, statelessly, and returns a `ManagedView`; `apply_managed_view` then gives the chat
model pinned runs, the summary and the last `passthrough_runs` runs verbatim. The summary is a
user/assistant pair, not seed 004's system message: providers hoist system messages to the
top (Anthropic, Gemini) or reject them mid-conversation (some local servers), which would put
a text that changes every turn into the cached system prompt. Invariant: nothing here raises
for a model or template failure -- the view comes back `failed` and the caller fails open.
Templates live in `contextcore.conversation.templates`; the names the chat uses are re-exported.
Given the chat's cached prefix (`SidePrefix`: the previous request up to its last
breakpoint), the manager request reuses it when reading it costs less than sending the
runs fresh: the messages it already holds (the earlier summary, the runs passed through)
are then listed cut short, the others in full, after it (`topics.side_request` weighs it).
Non-goals: persistence (history stores views), choosing the model, reading settings.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from contextcore.conversation.compaction import fit_to_budget
from contextcore.conversation.exchanges import group_exchanges
from contextcore.conversation.templates import (
    Template,
    TemplateError,
    TemplateInfo,
    list_templates,
    placeholders_in,
    render_template,
    resolve_template,
)
from contextcore.conversation.topics import (
    INDEX_CHARS,
    SidePrefix,
    format_messages,
    log_ignored_tool_call,
    message_text,
    side_request,
)
from contextcore.llm import (
    LLMClient,
    LLMError,
    LLMRequest,
    Message,
    TextDelta,
    ToolCallDelta,
    UsageReport,
)
from contextcore.modeljson import parse_json_output
from contextcore.tokens import TokenCounter

__all__ = (
    "MANAGED_ACK",
    "MANAGED_HEADER",
    "MANAGER_INSTRUCTION",
    "PLACEHOLDERS",
    "EndlessConfig",
    "ManagedView",
    "Template",
    "TemplateError",
    "TemplateInfo",
    "apply_managed_view",
    "build_managed_view",
    "list_templates",
    "managed_messages",
    "resolve_template",
    "skip_reason",
)

MAX_MESSAGE_CHARS = 4000
MANAGER_MAX_TOKENS = 1000
MANAGED_HEADER = "Context summary (managed):"
MANAGED_ACK = "Understood. I will continue from this summary of the conversation so far."
MANAGER_INSTRUCTION = (
    "You are the context manager of a chat about a git repository. You never answer the "
    "user; you write what the assistant must know to answer the next message, exactly as "
    "the template in the next message asks, and nothing else."
)
# What a template may use; see `build_managed_view` for what each one holds.
PLACEHOLDERS = (
    "repository",
    "previous_summary",
    "recent_turns",
    "latest_input",
    "run_count",
    "passthrough_runs",
)


@dataclass(frozen=True)
class EndlessConfig:
    """Seed 004's settings; None (a blank setting) and negatives count as 0.

    recent_runs: runs shown to the manager; 0 disables Endless mode (raw history).
    passthrough_runs: last runs kept verbatim after the summary; 0 means summary only.
    token_threshold: a history (measured whole) below it is not managed; 0 disables the gate.
    """

    recent_runs: int = 6
    passthrough_runs: int = 2
    token_threshold: int = 0

    def __post_init__(self) -> None:
        for name in ("recent_runs", "passthrough_runs", "token_threshold"):
            value = getattr(self, name)
            object.__setattr__(self, name, max(0, int(value)) if value else 0)


@dataclass(frozen=True)
class ManagedView:
    template_name: str = ""
    template_source: str = ""
    template_hash: str = ""
    model: str = ""
    input_payload: dict[str, Any] = field(default_factory=dict)
    raw_output: str = ""
    managed_prompt: str = ""
    stats: dict[str, Any] = field(default_factory=dict)
    parsed: dict[str, Any] | None = None
    failed: bool = False
    error: str = ""
    skipped: bool = False
    skip_reason: str = ""

    @property
    def applies(self) -> bool:
        return not (self.failed or self.skipped) and bool(self.managed_prompt)


# -- runs and the managed view ----------------------------------------------------------


def skip_reason(history: Sequence[Message], config: EndlessConfig, counter: TokenCounter) -> str:
    """Why this turn is not managed ("" when it is)."""
    if not config.recent_runs:
        return "Endless mode is off (recent_runs is 0)."
    runs = group_exchanges(history)
    if not runs:
        return "There is no history to manage yet."
    if config.passthrough_runs and len(runs) <= config.passthrough_runs:
        return "Every run is still passed through verbatim."
    tokens = counter.count(list(history))
    if config.token_threshold and tokens < config.token_threshold:
        return f"History is {tokens} tokens, below the {config.token_threshold}-token threshold."
    return ""


async def build_managed_view(
    *,
    history: Sequence[Message],
    latest_input: str,
    template: Template | str,
    config: EndlessConfig,
    client: LLMClient,
    model: str,
    counter: TokenCounter,
    timeout: float = 60,
    repo_root: Path | None = None,
    repository: str = "",
    previous_summary: str = "",
    max_tokens: int = MANAGER_MAX_TOKENS,
    prefix: SidePrefix | None = None,
) -> ManagedView:
    """One managed view for this turn, or a `skipped`/`failed` one; never raises.

    `template` is a resolved `Template` or a name resolved against `repo_root`. Placeholders:
    `{repository}` (`repository`), `{previous_summary}` (the last view's managed prompt, so
    facts older than `recent_runs` survive; "(none)"), `{recent_turns}` (the runs as
    `[N] ROLE: text` blocks), `{latest_input}`, `{run_count}`, `{passthrough_runs}`.
    `max_tokens` caps the summary (asked of the model, then enforced by cutting); `prefix`
    is the chat's cached prefix, reused when that is cheaper (see the module docstring).
    """
    history = list(history)
    reason = skip_reason(history, config, counter)
    if reason:
        return ManagedView(model=model, skipped=True, skip_reason=reason)
    try:
        if not isinstance(template, Template):
            template = resolve_template(template, repo_root)
    except TemplateError as error:
        return ManagedView(model=model, failed=True, error=str(error))
    runs = group_exchanges(history)[-config.recent_runs :]
    shown = [m for run in runs for m in run]
    values = {
        "repository": repository or "unnamed",
        "previous_summary": (previous_summary or "").strip() or "(none)",
        "recent_turns": format_messages(
            shown, max_chars=MAX_MESSAGE_CHARS, start=len(history) - len(shown)
        ),
        "latest_input": _cut(latest_input),
        "run_count": len(runs),
        "passthrough_runs": config.passthrough_runs,
    }
    prompt = _manager_prompt(template, values)
    options = {
        "model": model,
        "max_tokens": max_tokens if max_tokens > 0 else MANAGER_MAX_TOKENS,
        "temperature": 0.0,
        "metadata": {"purpose": "managed_view", "template": template.name},
    }
    request = _manager_request(
        prefix, template, values, shown, len(history), prompt, counter, options
    )
    payload = _payload(template, values, shown, latest_input, prompt)
    messages = request.messages
    reused = len(messages) - 1 if messages[-1]["content"] != prompt else 0  # prefix messages
    view = ManagedView(
        template_name=template.name,
        template_source=template.source,
        template_hash=template.sha256,
        model=model,
        input_payload={**payload, "reused_prefix_messages": reused},
    )
    view = await _ask(view, request, client, timeout)
    return view if view.failed else _finish(view, history, config, counter, request)


def apply_managed_view(
    history: Sequence[Message], view: ManagedView | None, config: EndlessConfig
) -> list[Message]:
    """The chat model's working history: runs holding a pinned message, the summary pair,
    then the last `passthrough_runs` runs verbatim. Unchanged (copied) when the view failed,
    was skipped, or Endless mode is off."""
    if view is None or not view.applies or not config.recent_runs:
        return [dict(m) for m in history]
    runs = group_exchanges(history)
    cut = len(runs) - min(config.passthrough_runs, len(runs))
    pinned = [m for run in runs[:cut] if any(x.get("pinned") for x in run) for m in run]
    recent = [m for run in runs[cut:] for m in run]
    return (
        [dict(m) for m in pinned]
        + managed_messages(view.managed_prompt)
        + [dict(m) for m in recent]
    )


def managed_messages(summary: str) -> list[Message]:
    return [
        {"role": "user", "content": f"{MANAGED_HEADER}\n{summary.strip()}"},
        {"role": "assistant", "content": MANAGED_ACK},
    ]


def _manager_request(
    prefix: SidePrefix | None,
    template: Template,
    values: dict[str, Any],
    shown: list[Message],
    total: int,
    prompt: str,
    counter: TokenCounter,
    options: dict[str, Any],
) -> LLMRequest:
    """The manager request: on its own (instruction and `prompt`), or the chat's request
    (`prefix`) with the template rendered against it, whichever costs less."""
    if prefix is None or not prefix.messages:
        return side_request(
            None, MANAGER_INSTRUCTION, index="", transcript=prompt, counter=None, **options
        )
    held = {(m.get("role"), message_text(m)) for m in prefix.messages}
    start = total - len(shown)
    lines = []
    for offset, message in enumerate(shown):
        above = (message.get("role"), message_text(message)) in held
        limit = INDEX_CHARS if above else MAX_MESSAGE_CHARS
        lines.append(format_messages([message], max_chars=limit, start=start + offset))
    against = dict(values, recent_turns="\n\n".join(lines))
    summary = managed_messages(values["previous_summary"])[0]
    if (summary["role"], summary["content"]) in held:
        against["previous_summary"] = "(the Context summary (managed) above)"
    index = _manager_prompt(template, against)
    return side_request(
        prefix, MANAGER_INSTRUCTION, index=index, transcript=prompt, counter=counter, **options
    )


def _manager_prompt(template: Template, values: dict[str, Any]) -> str:
    """The rendered template; content placeholders it does not use are appended, so a
    template without them still shows the manager the conversation."""
    text = render_template(template, values).strip()
    used = placeholders_in(template)
    sections = [
        ("Earlier summary", "previous_summary"),
        ("Recent conversation", "recent_turns"),
        ("The user's new message", "latest_input"),
    ]
    for title, key in sections:
        if key not in used:
            text += f"\n\n## {title}\n{values[key]}"
    return text


def _payload(
    template: Template, values: dict[str, Any], shown: list[Message], latest: str, prompt: str
) -> dict[str, Any]:
    """What the manager was given, JSON-safe (image blocks reduced to their text)."""
    source = {"name": template.name, "source": template.source, "sha256": template.sha256}
    return {
        "template": {**source, "contract": template.contract},
        "recent_runs": [{"role": str(m.get("role")), "content": message_text(m)} for m in shown],
        "latest_input": latest,
        "previous_summary": values["previous_summary"],
        "repository": values["repository"],
        "prompt": prompt,
    }


async def _ask(
    view: ManagedView, request: LLMRequest, client: LLMClient, timeout: float
) -> ManagedView:
    """`view` with the model's raw answer, or failed with a message for the user."""
    if not view.model:
        return _failed(view, "No model is configured for the context manager.")
    started = time.monotonic()
    try:
        raw, usage = await _complete(client, request, timeout)
    except LLMError as error:
        return _failed(view, f"The context manager model failed: {error.user_message}")
    except TimeoutError:
        return _failed(view, f"The context manager did not answer within {timeout:g} s.")
    except Exception as error:  # a broken client must not break the turn: fail open
        return _failed(view, f"The context manager failed: {type(error).__name__}: {error}")
    elapsed = round(1000 * (time.monotonic() - started))
    return replace(view, raw_output=raw, stats={"usage": usage, "elapsed_ms": elapsed})


def _finish(
    view: ManagedView,
    history: list[Message],
    config: EndlessConfig,
    counter: TokenCounter,
    request: LLMRequest,
) -> ManagedView:
    """The summary cut to the budget, the JSON a contract asked for, and the budget stats."""
    summary = fit_to_budget(view.raw_output, request.max_tokens or 1, counter)
    if not summary:
        return _failed(view, "The context manager returned no text.", view.raw_output)
    has_contract = view.input_payload["template"]["contract"] is not None
    parsed = parse_json_output(view.raw_output) if has_contract else None
    view = replace(view, managed_prompt=summary, parsed=parsed)
    runs = len(group_exchanges(history))
    stats = {
        "runs_total": runs,
        "runs_in": min(config.recent_runs, runs),
        "runs_passed_through": min(config.passthrough_runs, runs),
        "history_tokens_before": counter.count(history),
        "history_tokens_after": counter.count(apply_managed_view(history, view, config)),
        "summary_tokens": counter.count_text(summary),
        "manager_prompt_tokens": counter.count(request.messages),
    }
    return replace(view, stats={**stats, **view.stats})


async def _complete(
    client: LLMClient, request: LLMRequest, timeout: float
) -> tuple[str, dict[str, int] | None]:
    parts: list[str] = []
    usage: dict[str, int] | None = None
    async with asyncio.timeout(timeout):
        async for event in client.stream(request):
            if isinstance(event, TextDelta):
                parts.append(event.text)
            elif isinstance(event, UsageReport):
                usage = event.usage.as_dict()
            elif isinstance(event, ToolCallDelta) and event.name:
                log_ignored_tool_call(request, event.name)
    return "".join(parts), usage


def _failed(view: ManagedView, error: str, raw: str = "") -> ManagedView:
    return replace(view, failed=True, error=error, raw_output=raw, managed_prompt="")


def _cut(text: str) -> str:
    text = text if isinstance(text, str) else ""
    return text[:MAX_MESSAGE_CHARS] + "..." if len(text) > MAX_MESSAGE_CHARS else text
