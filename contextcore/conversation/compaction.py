"""History compaction (layer 1): truncate at a topic boundary or summarize old messages.

`HistoryCompactor.compact` returns the compacted history. Past the trigger it asks the
`TopicDetector` for a boundary and picks seed 000's case: "truncate" (a confident boundary
inside the verbatim window: drop what came before it), "summarize" (otherwise: replace the
messages before the verbatim window with one "History Summary" user/assistant pair) or
"none". Invariants: cuts fall between whole exchanges; the first exchange and exchanges
holding a pinned message (`"pinned": True`) are kept verbatim, in order, before the
summary; at least `min_verbatim_exchanges` user messages stay; the summary pair's text
depends only on the summary, so it is byte-identical in every later request (cacheable).
Non-goals: persistence, notifications, the stability tracker (the manager purges it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from contextcore.conversation.exchanges import group_exchanges
from contextcore.conversation.topics import (
    INDEX_CHARS,
    SAFE_BOUNDARY,
    SidePrefix,
    TopicBoundary,
    TopicDetector,
    complete_text,
    format_messages,
    message_text,
    side_request,
)
from contextcore.llm import LLMClient, LLMError, LLMRequest, Message
from contextcore.tokens import TokenCounter

SUMMARY_HEADER = "History Summary"
SUMMARY_ACK = "Understood. I will continue from this summary of the earlier conversation."
TRUNCATE_CONFIDENCE = 0.5
SUMMARIZER_MAX_CHARS = 4000
COPY_CHARS = 60  # an answer opening with this much of a message's own text is a copy of it

SUMMARIZER_PROMPT = """\
Summarize the earlier part of a conversation between a user and a coding assistant so
the conversation can continue without it. Keep: the user's instructions and preferences,
decisions made, files and components touched, work finished, and open tasks or
questions. Leave out greetings and anything superseded. Write plain prose or short
bullets, at most {budget} tokens, with no preamble."""


@dataclass(frozen=True)
class CompactionConfig:
    enabled: bool = True
    compaction_trigger_tokens: int = 24_000
    verbatim_window_tokens: int = 4_000
    summary_budget_tokens: int = 500
    min_verbatim_exchanges: int = 2


@dataclass(frozen=True)
class CompactionPlan:
    """What to do: messages before `cut` are dropped ("truncate") or replaced by
    `summary` ("summarize"); "none" leaves everything."""

    case: str
    cut: int = 0
    summary: str = ""


@dataclass(frozen=True)
class HistoryCompaction:
    """The compacted working history, with what a record of it needs (boundary, sizes)."""

    messages: tuple[Message, ...]
    case: str = "summarize"
    summary: str = ""
    boundary: TopicBoundary = SAFE_BOUNDARY
    messages_before: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    summary_failed: bool = False  # a "truncate" that stands in for a summary not made


def summary_messages(summary: str) -> list[Message]:
    # A user/assistant pair, not a system message: providers hoist system messages to the
    # top of the prompt, which would move the summary and break the cached prefix.
    return [
        {"role": "user", "content": f"{SUMMARY_HEADER}\n\n{summary.strip()}"},
        {"role": "assistant", "content": SUMMARY_ACK},
    ]


def exchange_starts(messages: Sequence[Message]) -> list[int]:
    """Index of the first message of every exchange (see `history.group_exchanges`)."""
    starts, index = [], 0
    for group in group_exchanges(messages):
        starts.append(index)
        index += len(group)
    return starts


def verbatim_start(messages: Sequence[Message], window_tokens: int, counter: TokenCounter) -> int:
    """Start of the verbatim window: the recent whole exchanges that fit `window_tokens`
    (the last exchange always counts as inside)."""
    starts = exchange_starts(messages)
    start, total = len(messages), 0
    for begin in reversed(starts):
        total += counter.count(list(messages[begin:start]))
        if total > window_tokens and start < len(messages):
            break
        start = begin
    return start


def snap_cut(messages: Sequence[Message], cut: int, min_exchanges: int) -> int:
    """`cut` moved back to an exchange start, then further back until at least
    `min_exchanges` user messages come after it."""
    starts = [s for s in exchange_starts(messages) if s <= cut] or [0]
    position = len(starts) - 1
    while position > 0 and _user_count(messages[starts[position] :]) < min_exchanges:
        position -= 1
    return starts[position]


def _user_count(messages: Sequence[Message]) -> int:
    return sum(1 for m in messages if m.get("role") == "user")


def kept_indexes(messages: Sequence[Message], cut: int) -> list[int]:
    """Indexes before `cut` that compaction keeps: the first exchange when it starts with
    a user message, and every exchange holding a pinned message (whole, so that roles
    still alternate)."""
    kept: list[int] = []
    index = 0
    for number, group in enumerate(group_exchanges(messages[:cut])):
        first_user = number == 0 and group[0].get("role") == "user"
        if first_user or any(m.get("pinned") for m in group):
            kept += range(index, index + len(group))
        index += len(group)
    return kept


def apply_compaction(
    messages: Sequence[Message], plan: CompactionPlan, *, min_exchanges: int = 2
) -> list[Message]:
    """The compacted history for `plan`; "none" returns the messages unchanged."""
    if plan.case == "none":
        return list(messages)
    cut = snap_cut(messages, plan.cut, min_exchanges)
    head = [messages[i] for i in kept_indexes(messages, cut)]
    middle = summary_messages(plan.summary) if plan.case == "summarize" else []
    return [dict(m) for m in head] + middle + [dict(m) for m in messages[cut:]]


def fit_to_budget(text: str, budget: int, counter: TokenCounter) -> str:
    """`text` cut at a word so it counts at most `budget` tokens ("..." marks a cut)."""
    text = text.strip()
    if counter.count_text(text) <= budget:
        return text
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if counter.count_text(_cut_at_word(text, middle)) <= budget:
            low = middle
        else:
            high = middle - 1
    return _cut_at_word(text, low) if low else ""


def _cut_at_word(text: str, length: int) -> str:
    head = text[:length]
    if length < len(text) and " " in head:
        head = head.rsplit(" ", 1)[0]
    return head.rstrip() + " ..."


@dataclass(frozen=True)
class CompactionPreview:
    """A compaction not made: how many messages the summarizer would read, and the
    request (with its size in tokens) it would be sent."""

    messages: int
    tokens: int
    request: LLMRequest


class HistoryCompactor:
    """Layer 1 for `ContextManager`. `compact` returns a `HistoryCompaction` (case "none"
    below the trigger or with nothing to remove), or None when the summarizer failed and
    the history is not yet past twice the trigger: the manager then keeps the history and
    layer 2 (emergency truncation) remains the safety net. Past twice the trigger a failed
    summary falls back to truncating at the verbatim window (`summary_failed`). An answer
    that repeats a message of the history (`copies`) is a failed summary."""

    def __init__(
        self,
        config: CompactionConfig,
        detector: TopicDetector,
        summarizer_client: LLMClient,
        model: str,
        counter: TokenCounter,
        *,
        timeout: float = 60.0,
    ) -> None:
        self.config, self.detector, self.counter = config, detector, counter
        self.client, self.model, self.timeout = summarizer_client, model, timeout

    def should_compact(self, tokens: int, trigger_tokens: int | None = None) -> bool:
        trigger = trigger_tokens or self.config.compaction_trigger_tokens
        return self.config.enabled and tokens > trigger

    async def compact(
        self,
        messages: Sequence[Message],
        *,
        trigger_tokens: int | None = None,
        focus: str = "",
        prefix: SidePrefix | None = None,
        fallback: bool = True,
    ) -> HistoryCompaction | None:
        """Compact `messages`. `trigger_tokens` (the manager's trigger) wins over the
        config's; `focus` steers what the summary keeps (`/compact focus text`); `prefix`,
        the chat's cached prefix, is reused by the detector and summarizer requests (which
        then go to the chat's model) where that costs less than a fresh transcript. Without
        `fallback`, a failed summary is None at any size (an offline model's silence is not
        a reason to drop messages)."""
        messages = list(messages)
        trigger = trigger_tokens or self.config.compaction_trigger_tokens
        tokens = self.counter.count(messages)
        if not messages or not self.should_compact(tokens, trigger):
            return self._result(messages, CompactionPlan("none"), tokens)
        boundary = await self.detector.detect(messages, prefix)
        plan = self.plan(messages, boundary)
        if plan.case == "summarize":
            removed = [messages[i] for i in self._summarizable(messages, plan.cut)]
            summary = await self.summarize(removed, focus, prefix)
            if summary is not None and copies(summary, messages):
                summary = None  # an old message given back is not a summary of it
            if summary is None and (tokens <= 2 * trigger or not fallback):
                return None
            plan = CompactionPlan(
                "truncate" if summary is None else "summarize", plan.cut, summary or ""
            )
            return self._result(messages, plan, tokens, boundary, failed=summary is None)
        return self._result(messages, plan, tokens, boundary)

    def plan(self, messages: Sequence[Message], boundary: TopicBoundary) -> CompactionPlan:
        """Seed 000's cases: truncate at a confident boundary inside the verbatim window,
        otherwise summarize what precedes the window; "none" when nothing can go."""
        start = verbatim_start(messages, self.config.verbatim_window_tokens, self.counter)
        index = boundary.boundary_index
        confident = boundary.confidence >= TRUNCATE_CONFIDENCE
        truncate = index is not None and index >= start and confident
        cut = snap_cut(messages, index if truncate else start, self.config.min_verbatim_exchanges)
        if not self._summarizable(messages, cut):
            return CompactionPlan("none")
        return CompactionPlan("truncate" if truncate else "summarize", cut)

    def _summarizable(self, messages: Sequence[Message], cut: int) -> list[int]:
        kept = set(kept_indexes(messages, cut))
        return [i for i in range(cut) if i not in kept]

    def preview(
        self,
        messages: Sequence[Message],
        *,
        trigger_tokens: int | None = None,
        focus: str = "",
        prefix: SidePrefix | None = None,
    ) -> CompactionPreview | None:
        """What `compact` would ask the summarizer, asking nothing (for a model that only
        reports its requests): the plan at the safe boundary, as if the detector found no
        topic change; None when nothing would be summarized."""
        messages = list(messages)
        trigger = trigger_tokens or self.config.compaction_trigger_tokens
        if not messages or not self.should_compact(self.counter.count(messages), trigger):
            return None
        plan = self.plan(messages, SAFE_BOUNDARY)
        if plan.case != "summarize":
            return None
        removed = [messages[i] for i in self._summarizable(messages, plan.cut)]
        request = self.summary_request(removed, focus, prefix)
        return CompactionPreview(len(removed), self.counter.count(request.messages), request)

    def summary_request(
        self, messages: Sequence[Message], focus: str = "", prefix: SidePrefix | None = None
    ) -> LLMRequest:
        """The summarizer's request for `messages` (see `summarize`)."""
        budget = self.config.summary_budget_tokens
        system = SUMMARIZER_PROMPT.format(budget=budget)
        if focus.strip():
            system += f"\nPay particular attention to: {focus.strip()}"
        return side_request(
            prefix,
            system,
            index=format_messages(messages, max_chars=INDEX_CHARS),
            transcript=format_messages(messages, max_chars=SUMMARIZER_MAX_CHARS),
            counter=self.counter,
            model=self.model,
            max_tokens=budget,
            temperature=0.0,
            metadata={"purpose": "history_summary"},
        )

    async def summarize(
        self, messages: Sequence[Message], focus: str = "", prefix: SidePrefix | None = None
    ) -> str | None:
        """A summary of `messages` within `summary_budget_tokens` (asked of the model as
        max_tokens, then enforced by cutting); None when the model fails or says nothing."""
        budget = self.config.summary_budget_tokens
        request = self.summary_request(messages, focus, prefix)
        if not self.model or not messages:
            return None
        try:
            text = await complete_text(self.client, request, self.timeout)
        except (LLMError, TimeoutError):
            return None
        return fit_to_budget(text, budget, self.counter) or None

    def _result(
        self,
        messages: list[Message],
        plan: CompactionPlan,
        tokens: int,
        boundary: TopicBoundary = SAFE_BOUNDARY,
        *,
        failed: bool = False,
    ) -> HistoryCompaction:
        compacted = apply_compaction(
            messages, plan, min_exchanges=self.config.min_verbatim_exchanges
        )
        return HistoryCompaction(
            messages=tuple(compacted),
            case=plan.case,
            summary=plan.summary,
            boundary=boundary,
            messages_before=len(messages),
            tokens_before=tokens,
            tokens_after=self.counter.count(compacted),
            summary_failed=failed,
        )


def copies(answer: str, messages: Sequence[Message]) -> bool:
    """Whether the summarizer's `answer` opens with a stretch of one message's own text
    (a model that repeats an earlier reply, cut to the budget, has summarized nothing).
    An earlier summary is not such a message: a new one may open as it did."""
    opening = " ".join(answer.split())[:COPY_CHARS]
    if len(opening) < COPY_CHARS:
        return False
    texts = (message_text(m) for m in messages)
    return any(
        opening in " ".join(text.split()) for text in texts if not text.startswith(SUMMARY_HEADER)
    )


def create_compactor(
    client: LLMClient, model: str, counter: TokenCounter, config: CompactionConfig | None = None
) -> HistoryCompactor:
    """A compactor whose detector and summarizer both use `model` (the smaller model)."""
    detector = TopicDetector(client, model, counter)
    return HistoryCompactor(config or CompactionConfig(), detector, client, model, counter)
