"""Budget layers 2 and 3 of a `ContextManager`, and the estimates they compare.

Layer 2 (`emergency_truncate`): past twice the compaction trigger, the oldest whole
exchanges go. Layer 3 (`shed_files_if_needed`): while the plain-layout estimate (of what
the person chose: the suggestions for the message never count) passes `shed_ratio` of the
window, the largest unpinned file goes. `files_to_shed` says what a
request sent now would shed, changing nothing. A cheap overestimate decides the common
case (everything fits) without assembling. Layer 1, compaction, runs after a response,
outside the manager (`contextcore.conversation.compaction`); `should_compact` says when.
A mixin: it reads the manager's state and its request helpers, and keeps none of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from contextcore.config import ContextConfig
from contextcore.conversation.exchanges import drop_oldest_exchanges
from contextcore.files import FileContext
from contextcore.llm import Message
from contextcore.models import ModelFacts
from contextcore.prompt.assembly import ImageInput
from contextcore.prompt.instructions import Instructions
from contextcore.prompt.request import Draft
from contextcore.prompt.suggested import Suggested
from contextcore.tokens import TokenCounter, count_image


class BudgetLayers:
    """Layers 2 and 3 over the state `ContextManager` holds (and its `_assembler`,
    `_builder` and `_inputs`, which build the request these layers measure)."""

    facts: ModelFacts
    counter: TokenCounter
    config: ContextConfig
    file_context: FileContext
    instructions: Instructions
    repo_map: str
    file_tree: str
    reference: str
    metadata: tuple[str, ...]
    suggested: Suggested
    _history: list[Message]

    @property
    def compaction_trigger(self) -> int:
        return self.config.compaction_trigger(self.facts.input_budget)

    def should_compact(self) -> bool:
        return (
            self.config.compaction_enabled and self.history_token_count() > self.compaction_trigger
        )

    def truncation_due(self) -> bool:
        """Whether the next request's layer 2 will cut the history."""
        return self.history_token_count() > 2 * self.compaction_trigger

    def emergency_truncate(self) -> int:
        """Layer 2: past twice the trigger, drop the oldest whole exchanges down to the
        trigger. Returns how many messages were dropped."""
        if not self.truncation_due():
            return 0
        kept = drop_oldest_exchanges(self._history, self.compaction_trigger, self.counter)
        dropped = len(self._history) - len(kept)
        if dropped:
            self.set_history(kept)
        return dropped

    def estimate_prompt_tokens(
        self, user_content: str = "", images: Sequence[ImageInput] = ()
    ) -> int:
        """Tokens of the request with today's content in the plain layout (no cache layout
        overheads, no trimming): what layer 3 compares with the window."""
        return self.estimate_breakdown(user_content, images)["total"]

    def estimate_breakdown(
        self, user_content: str = "", images: Sequence[ImageInput] = ()
    ) -> dict[str, Any]:
        """Tokens per section of everything selected, before any shedding (for the HUD)."""
        assembler = self._assembler()
        return assembler.breakdown(assembler.flat(self._inputs(user_content, images)))

    def shed_files_if_needed(
        self, user_content: str = "", images: Sequence[ImageInput] = ()
    ) -> list[str]:
        """Layer 3: while the estimate passes `shed_ratio` of the window, drop the largest
        unpinned file. Returns the dropped paths (for the chat notice)."""
        limit = self.config.shed_ratio * self.facts.estimate_window
        if self._upper_bound_tokens(user_content, images) <= limit:
            return []  # the common case, decided without assembling anything
        # A suggestion never sheds a file: the estimate is of what the person chose.
        kept, self.suggested = self.suggested, Suggested()
        try:
            return self._shed_largest(limit, user_content, images)
        finally:
            self.suggested = kept

    def _shed_largest(
        self, limit: float, user_content: str, images: Sequence[ImageInput]
    ) -> list[str]:
        estimate = self.estimate_prompt_tokens(user_content, images)
        dropped: list[str] = []
        by_size = sorted(
            (p for p, _ in self.file_context.items() if p not in self.file_context.pinned),
            key=lambda p: (-self.counter.count_text(self.file_context.get_content(p) or ""), p),
        )
        for path in by_size:
            if estimate <= limit:
                break
            self.file_context.remove_file(path)
            dropped.append(path)
            estimate = self.estimate_prompt_tokens(user_content, images)
        return dropped

    def files_to_shed(self, user_content: str = "") -> list[str]:
        """The files `prepare_request` would shed if sent now (layer 3, then the hard
        cap), largest first; nothing changes. The picker and the HUD name them."""
        if self._upper_bound_tokens(user_content, ()) <= self.facts.input_budget:
            return []  # the common case: everything fits, even overestimated
        with self.file_context.trial():
            shed = self.shed_files_if_needed(user_content)
            draft = Draft(self._inputs(user_content, ()), frozenset(self.file_context.pinned))
            _, draft = self._builder().build(draft, None)
            return shed + list(draft.shed)

    def _upper_bound_tokens(self, user_content: str, images: Sequence[ImageInput]) -> int:
        """A cheap overestimate of the plain layout: every text counted (from the cache),
        plus generous framing per file and per message."""
        count = self.counter.count_text
        texts = [
            self.config.system_prompt,
            self.instructions.text(),
            self.repo_map,
            self.file_tree,
            self.reference,
            self.suggested.text,
            *self.metadata,
            user_content,
        ]
        files = list(self.file_context.items())
        total = sum(count(t) for t in texts if t) + sum(count(t) for _, t in files)
        total += sum(count(str(m.get("content") or "")) for m in self._history)
        total += sum(count_image(i.width, i.height, "anthropic") + 85 for i in images)
        return total + 64 * len(files) + 16 * (len(self._history) + len(self.metadata)) + 512
