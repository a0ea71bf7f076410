"""ContextManager: one chat session's context state and the three budget layers.

Holds the working history, the `FileContext`, pins, the repository map/tree/reference texts
and the `StabilityTracker`, and turns them into a request with `prepare_request`: layer 2
(drop whole old exchanges past twice the compaction trigger), layer 3 (shed the largest
unpinned files past `shed_ratio` of the window, with a notice), then assembly under the hard
cap `facts.input_budget` (`contextcore.prompt.request`). Layer 1, compaction, runs after a
response outside it; `should_compact` says when. Configured by `ContextConfig`; `to_state()`
and `from_state()` carry a session across processes as JSON-safe dicts. Layers 2 and 3 and
the estimates they compare live in `contextcore.layers`, which the manager mixes in.
Non-goals: persistence, LLM calls, reading settings.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contextcore.budget import section_breakdown
from contextcore.config import TIER_SCHEMES, ContextConfig
from contextcore.conversation.exchanges import history_entry
from contextcore.files import FileContext
from contextcore.layers import BudgetLayers
from contextcore.llm import Message
from contextcore.models import ModelFacts
from contextcore.prompt.assembly import (
    ImageInput,
    PromptAssembler,
    PromptChunks,
    PromptInputs,
    has_marker,
)
from contextcore.prompt.cacherules import rules_for
from contextcore.prompt.instructions import Instructions
from contextcore.prompt.request import Draft, Notice, RequestBuilder
from contextcore.prompt.siderequest import SidePrefix
from contextcore.prompt.stability import StabilityTracker, stability_items
from contextcore.prompt.suggested import Suggested
from contextcore.tokens import TokenCounter, provider_for_model


@dataclass(frozen=True)
class PreparedPrompt:
    messages: list[Message]
    breakdown: dict[str, Any]
    notices: list[Notice]
    estimated_tokens: int
    chunks: PromptChunks = field(repr=False)


class ContextManager(BudgetLayers):
    def __init__(
        self,
        facts: ModelFacts,
        counter: TokenCounter,
        *,
        repo_root: Path | None = None,
        config: ContextConfig | None = None,
    ) -> None:
        self.facts, self.counter = facts, counter
        self.config = config or ContextConfig()
        if self.config.tier_scheme not in TIER_SCHEMES:
            raise ValueError(f"tier_scheme must be one of {TIER_SCHEMES}")
        self.file_context = FileContext(repo_root, size_cap=self.config.file_size_cap)
        tracker_scheme = "seed" if self.config.tier_scheme == "seed" else "acdc"
        self.stability = StabilityTracker(tracker_scheme)
        self.repo_map = self.file_tree = self.reference = ""
        self.map_focus = ""  # the map's per-turn part, set by the caller each turn
        self.suggested = Suggested()  # "Suggested for this message", set by the caller too
        # The artifact trail's text (set by the caller) and whether the history was cut
        # (a truncation here turns it on too).
        self.trail, self.trail_on = "", False
        self.instructions = Instructions()  # the project's, set by the caller (AGENTS.md …)
        self.metadata: tuple[str, ...] = ()
        self._history: list[Message] = []
        self._last_items: dict[str, str] = {}
        self.restore_notices: list[Notice] = []

    # -- history (seed 000 names) --------------------------------------------------------

    def add_message(self, role: str, content: str, *, message_id: str = "") -> None:
        self._history.append(history_entry({"role": role, "content": content, "id": message_id}))

    def add_exchange(self, user: str, assistant: str, *, ids: tuple[str, str] = ("", "")) -> None:
        self.add_message("user", user, message_id=ids[0])
        self.add_message("assistant", assistant, message_id=ids[1])

    def get_history(self) -> list[Message]:
        """The working history; entries may carry the stored message `id` and `pinned`."""
        return [dict(m) for m in self._history]

    def recent_history(self, count: int) -> list[Message]:
        """Copies of the last `count` entries of the working history (not of all of it)."""
        return [dict(m) for m in self._history[-count:]] if count > 0 else []

    def history_view(self) -> tuple[Message, ...]:
        """The working history's own entries, not copied, for a reader that keeps them
        without changing them (the engine itself only ever sets or clears an entry's pin)."""
        return tuple(self._history)

    def set_history(self, messages: Sequence[Mapping[str, Any]]) -> None:
        self._history = [history_entry(m) for m in messages]
        self.reregister_history_items()

    @contextmanager
    def substituted_history(self, messages: Sequence[Mapping[str, Any]] | None) -> Iterator[None]:
        """Assemble from `messages` instead of the working history for the duration (an
        Endless-mode managed view); the working history itself is left untouched."""
        if messages is None:
            yield
            return
        saved = self._history
        self._history = [history_entry(m) for m in messages]
        try:
            yield
        finally:
            self._history = saved

    def clear_history(self) -> None:
        self._history = []
        self.stability.purge_history()

    def reregister_history_items(self) -> None:
        self.stability.purge_history()

    def history_token_count(self) -> int:
        return self.counter.count(self._history)

    def get_compaction_status(self, history_tokens: int | None = None) -> dict[str, Any]:
        """Seed 000's compaction status: `enabled`, `trigger` (the history tokens past which
        layer 1 compacts) and `percent`, the history's share of that trigger, with the
        `history_tokens` it was figured from (counted here unless the caller has them)."""
        history = self.history_token_count() if history_tokens is None else history_tokens
        trigger = self.compaction_trigger
        return {
            "enabled": self.config.compaction_enabled,
            "trigger": trigger,
            "percent": round(100 * history / trigger) if trigger else 0,
            "history_tokens": history,
        }

    # -- files ------------------------------------------------------------------------

    def pin_file(self, path: str) -> bool:
        if not self.file_context.has_file(path):
            return False
        self.file_context.pinned.add(path.replace("\\", "/").strip("/"))
        return True

    def set_context_texts(
        self,
        *,
        repo_map: str = "",
        file_tree: str = "",
        reference: str = "",
        metadata: Sequence[str] = (),
    ) -> None:
        """Repository map (symbols), file tree, reference text and metadata-pool lines."""
        self.repo_map, self.file_tree, self.reference = repo_map, file_tree, reference
        self.metadata = tuple(metadata)

    def update_context_texts(self, **texts: Any) -> None:
        """Change only the texts named (a turn's steps each own one: the sets the metadata
        lines, the map its text, grounding the reference); the others stay as they are."""
        held = {"repo_map": self.repo_map, "file_tree": self.file_tree}
        held |= {"reference": self.reference, "metadata": self.metadata}
        self.set_context_texts(**(held | texts))

    def get_token_budget(self) -> dict[str, Any]:
        preview = self.preview_request()
        history_tokens = self.history_token_count()
        return {
            "history_tokens": history_tokens,
            "max_history_tokens": self.facts.max_history_tokens,
            "max_input_tokens": self.facts.max_input_tokens,
            "input_budget": self.facts.input_budget,
            "output_reserve": self.facts.output_reserve,
            "estimated_tokens": preview.estimated_tokens,
            "remaining": max(0, self.facts.input_budget - preview.estimated_tokens),
            "needs_summary": self.should_compact(),
            "sections": section_breakdown(preview.breakdown["sections"], self.facts.input_budget),
            "tiers": preview.breakdown["tiers"],
        }

    # -- requests ---------------------------------------------------------------------

    def _assembler(self) -> PromptAssembler:
        return PromptAssembler(
            self.counter,
            min_cacheable_tokens=self.facts.min_cacheable_tokens,
            provider=provider_for_model(self.facts.name),
        )

    def _builder(self) -> RequestBuilder:
        return RequestBuilder(
            self.facts,
            self.counter,
            self._assembler(),
            self.stability,
            scheme=self.config.tier_scheme,
            policy=self.config.layout_policy(self.facts.input_budget),
        )

    def _inputs(self, user_content: str, images: Sequence[ImageInput]) -> PromptInputs:
        return PromptInputs(
            system_prompt=self.config.system_prompt,
            instructions=self.instructions.text(),
            repo_map=self.repo_map,
            map_focus=self.map_focus,
            trail=self.trail if self.trail_on else "",
            suggested=self.suggested.text,
            file_tree=self.file_tree,
            reference=self.reference,
            metadata=self.metadata,
            files=tuple(self.file_context.items()),
            history=tuple(self._history),
            user_content=user_content,
            images=tuple(images),
        )

    def cached_prefix(self) -> list[Message]:
        """The next request up to its last cache breakpoint, for side requests (topic
        detector, summarizer) to reuse with their instruction appended; empty unless the
        acdc layout is in use (the simple layouts are baselines) and something is marked."""
        if self.config.tier_scheme != "acdc":
            return []
        messages = self.preview_request("").messages
        marks = [i for i, message in enumerate(messages) if has_marker(message)]
        return messages[: marks[-1] + 1] if marks else []

    def refresh_plan(self) -> tuple[float, ...]:
        """When (on the clock of `prepare_request`'s `now`) the keep-alive refreshes still
        due since the last request go out: empty when keep-alive is off, the last request
        cached nothing (no breakpoint: a prompt below the provider's minimum), or none is
        worth its read (`cachepolicy.refresh_times`)."""
        if not self.config.keeps_warm:
            return ()
        return self.stability.refresh_plan(rules_for(self.facts))

    def side_prefix(
        self,
        tools: Sequence[dict[str, Any]] | None,
        history: Sequence[Mapping[str, Any]] | None = None,
    ) -> SidePrefix | None:
        """What a request that means to read the chat's cache repeats: `tools` (the chat's
        tool definitions, which the provider caches first) and `cached_prefix` (assembled
        from `history` when given), priced at the model's cache read; None when nothing
        is cached."""
        with self.substituted_history(history):
            cached = self.cached_prefix()
        if not cached:
            return None
        read_price = rules_for(self.facts).read_multiplier
        return SidePrefix(tuple(cached), read_price, tuple(tools or ()))

    def preview_request(
        self, user_content: str = "", images: Sequence[ImageInput] = (), *, now: float | None = None
    ) -> PreparedPrompt:
        """What `prepare_request` would send, changing nothing (for the HUD)."""
        draft = Draft(self._inputs(user_content, images), frozenset(self.file_context.pinned))
        built, draft = self._builder().build(draft, now)
        breakdown = self._assembler().breakdown(built.chunks)
        return PreparedPrompt(built.messages, breakdown, draft.notices, built.tokens, built.chunks)

    def prepare_request(
        self, user_content: str, images: Sequence[ImageInput] = (), *, now: float | None = None
    ) -> PreparedPrompt:
        """Layers 2 and 3, then assembly under the hard cap; commits the shed files and
        the cache layout. `now` (seconds, any epoch) lets the layout notice cache expiry."""
        notices = self._refresh_files()
        dropped = self.emergency_truncate()
        if dropped:
            self.trail_on = True
            notices.append(
                Notice(
                    "history_truncated",
                    f"The {dropped} oldest messages were "
                    "dropped: the conversation outgrew its budget.",
                )
            )
        shed = self.shed_files_if_needed(user_content, images)
        draft = Draft(self._inputs(user_content, images), frozenset(self.file_context.pinned))
        built, draft = self._builder().build(draft, now)
        for path in draft.shed:
            self.file_context.remove_file(path)
        if shed or draft.shed:
            paths = tuple(shed + draft.shed)
            notices.append(
                Notice(
                    "files_shed",
                    "Removed from context to fit the model's window: " + ", ".join(paths),
                    paths,
                )
            )
        self.stability.note_request(
            now,
            model=self.facts.name,
            lifetime=built.lifetime,
            marked=any(has_marker(message) for message in built.messages),
        )
        if built.layout is not None:
            self.stability.layout = built.layout
            self.stability.versions = built.versions
        self._last_items = stability_items(draft.inputs)
        breakdown = self._assembler().breakdown(built.chunks)
        breakdown["rebuild_reason"] = built.rebuild_reason
        return PreparedPrompt(
            built.messages, breakdown, notices + draft.notices, built.tokens, built.chunks
        )

    def _refresh_files(self) -> list[Notice]:
        return [
            Notice("file_dropped", f"{r.path} left the context: {r.reason}", (r.path,))
            for r in self.file_context.refresh()
            if not r.ok
        ]

    def record_exchange(
        self, user_content: str, assistant_content: str, *, ids: tuple[str, str] = ("", "")
    ) -> None:
        """After a response: append the exchange and update stability counts."""
        self.add_exchange(user_content, assistant_content, ids=ids)
        self.stability.update(self._last_items)

    # -- persistence ------------------------------------------------------------------

    def to_state(self) -> dict[str, Any]:
        disk = self.file_context.repo_root is not None
        return {
            "version": 1,
            "history": self.get_history(),
            "files": [
                {"path": p, "content": None if disk and self.file_context.from_disk(p) else t}
                for p, t in self.file_context.items()
            ],
            "pinned": sorted(self.file_context.pinned),
            "texts": {
                "repo_map": self.repo_map,
                "file_tree": self.file_tree,
                "reference": self.reference,
                "metadata": list(self.metadata),
            },
            "instructions": self.instructions.to_state(),
            "trail": {"text": self.trail, "on": self.trail_on},
            "suggested": self.suggested.to_state(),
            "last_items": dict(self._last_items),
            "stability": self.stability.to_state(),
        }

    @classmethod
    def from_state(
        cls,
        state: Mapping[str, Any],
        facts: ModelFacts,
        counter: TokenCounter,
        *,
        repo_root: Path | None = None,
        config: ContextConfig | None = None,
    ) -> ContextManager:
        """Restore a session; files that can no longer be read are left out and listed
        in `restore_notices`."""
        manager = cls(facts, counter, repo_root=repo_root, config=config)
        manager._history = [history_entry(m) for m in state["history"]]
        for item in state.get("files", []):
            result = manager.file_context.add_file(item["path"], item.get("content"))
            if not result.ok:
                manager.restore_notices.append(
                    Notice("file_dropped", f"{result.path}: {result.reason}", (result.path,))
                )
        for path in state.get("pinned", []):
            manager.pin_file(path)
        texts = state.get("texts", {})
        manager.set_context_texts(**{**texts, "metadata": tuple(texts.get("metadata", ()))})
        manager.instructions = Instructions.from_state(state.get("instructions"))
        trail = state.get("trail") or {}
        manager.trail, manager.trail_on = str(trail.get("text", "")), bool(trail.get("on"))
        manager.suggested = Suggested.from_state(state.get("suggested"))
        manager._last_items = dict(state.get("last_items", {}))
        stability = StabilityTracker.from_state(state.get("stability", {}))
        if stability.scheme == manager.stability.scheme:
            manager.stability = stability
        return manager
