"""Building one request under budget: layout planning, assembly and the trim ladder.

`RequestBuilder.build` works on a `PromptInputs` draft and never touches the manager, so a
preview and the real request share one code path; the caller commits what it returns
(shed files, the new layout). Invariant: the returned messages are estimated at no more
than `facts.input_budget` tokens. Ladder when a request does not fit, cheapest loss first:
leave out the suggestions for the message, rebuild the acdc layout (drops stale copies),
window the history (whole exchanges, first one kept if possible), drop metadata, reference,
file tree, repository map, project instructions, unpinned files (largest first), pinned
files, then truncate the current message and, last, the system prompt, each with a marker
saying so.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from contextcore.conversation.exchanges import window_history
from contextcore.llm import Message
from contextcore.models import ModelFacts
from contextcore.prompt.appendonly import (
    HISTORY_REWRITTEN,
    Doc,
    LayoutPolicy,
    LayoutState,
    bump_versions,
    plan_layout,
)
from contextcore.prompt.assembly import (
    MAP_KEY,
    PromptAssembler,
    PromptChunks,
    PromptInputs,
    l0_text,
    manifest_text,
)
from contextcore.prompt.cachepolicy import FIVE_MINUTES, OFF, ONE_HOUR, choose_write
from contextcore.prompt.cacherules import rules_for
from contextcore.prompt.stability import StabilityTracker
from contextcore.tokens import IMAGE_FLAT_TOKENS, TokenCounter

TRUNCATION_MARKER = "\n[truncated: {n} characters omitted to fit the model's context window]"


@dataclass(frozen=True)
class Notice:
    """Something the chat should tell the user about this request."""

    kind: str
    text: str
    paths: tuple[str, ...] = ()


@dataclass
class Draft:
    inputs: PromptInputs
    pinned: frozenset[str] = frozenset()
    shed: list[str] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    rebuild: bool = False


@dataclass(frozen=True)
class Built:
    chunks: PromptChunks
    messages: list[Message]
    tokens: int
    layout: LayoutState | None
    versions: dict[str, list[Any]]
    rebuild_reason: str
    lifetime: float = 0.0  # seconds the prefix this request writes stays cached; 0: none


def docs_for(inputs: PromptInputs) -> list[Doc]:
    """The layout's documents. The repository map is one, so that a change to it is a
    small diff after the prefix instead of a new prefix (it ends in a newline so that
    it can be diffed)."""
    docs = [Doc(MAP_KEY, inputs.repo_map.rstrip("\n") + "\n")] if inputs.repo_map else []
    docs += [Doc("tree", inputs.file_tree)] if inputs.file_tree else []
    docs += [Doc("reference", inputs.reference)] if inputs.reference else []
    return docs + [Doc(f"file:{path}", text) for path, text in inputs.files]


def truncate_text(text: str, keep: int) -> str:
    keep = max(0, min(keep, len(text)))
    if keep == len(text):
        return text
    return text[:keep] + TRUNCATION_MARKER.format(n=len(text) - keep)


_DROPPED = MappingProxyType({"instructions": "The project instructions were"})


class RequestBuilder:
    def __init__(
        self,
        facts: ModelFacts,
        counter: TokenCounter,
        assembler: PromptAssembler,
        tracker: StabilityTracker,
        *,
        scheme: str,
        policy: LayoutPolicy,
    ) -> None:
        self.facts, self.counter, self.assembler = facts, counter, assembler
        self.tracker, self.scheme, self.policy = tracker, scheme, policy
        self.rules = rules_for(facts)
        explicit = self.rules.kind == "explicit"
        self.policy = replace(
            policy,
            read_price=self.rules.read_multiplier,
            rebuild_price=self.rules.write_multiplier if explicit else 1.0,
        )

    def assemble(self, draft: Draft, now: float | None) -> Built:
        inputs = draft.inputs
        layout, versions, reason = None, self.tracker.versions, ""
        if self.scheme == "acdc" and self.rules.kind == "none":
            # Nothing is cached: the plainest layout sends the fewest tokens.
            chunks = self.assembler.flat(inputs, cache_last=False)
        elif self.scheme == "acdc":
            versions = bump_versions(self.tracker.versions, docs_for(inputs))
            state = None if draft.rebuild else self.tracker.layout
            # Another model has none of this prefix cached: rebuild it free of old copies.
            switched = self.tracker.cache_lost(None, self.facts.name) == "model changed"
            layout, reason = plan_layout(
                None if switched else state,
                l0_text=l0_text(inputs),
                docs=docs_for(inputs),
                versions=versions,
                history=inputs.history,
                now=now,
                counter=self.counter,
                policy=self.policy,
                manifest=manifest_text(inputs, versions),
            )
            reason = "model changed" if switched else reason
            write, seconds = self._cache_write(reason, now)
            layout = replace(layout, written_ttl=seconds)
            stable = self._stable_write(write, reason)
            chunks = replace(
                self.assembler.appendonly(inputs, layout), cache_write=write, stable_write=stable
            )
        elif self.scheme == "seed":
            chunks = self.assembler.tiered(inputs, self.tracker.tier_of)
        else:
            chunks = self.assembler.flat(inputs, cache_last=self.scheme == "last")
        messages = self.assembler.to_messages(chunks)
        tokens = self.counter.count(messages) + self._image_extra(chunks)
        lifetime = self._lifetime(chunks, layout)
        return Built(chunks, messages, tokens, layout, dict(versions), reason, lifetime)

    def _lifetime(self, chunks: PromptChunks, layout: LayoutState | None) -> float:
        if layout is not None and layout.written_ttl is not None:
            return layout.written_ttl
        if self.rules.kind == "none" or chunks.cache_write == OFF:
            return 0.0
        return self.rules.lifetime(chunks.cache_write)[0]

    def _cache_write(self, reason: str, now: float | None) -> tuple[str, float]:
        """The lifetime this request writes (see `cachepolicy`). A prefix still cached
        keeps being marked even when the policy would not write, or it could not be read."""
        choice = choose_write(
            self.rules, self.tracker.rhythm(now), keep_alive=self.policy.keep_alive
        )
        previous = self.tracker.layout.written_ttl if self.tracker.layout else None
        if choice.write == OFF and not reason and previous:
            return (ONE_HOUR if previous > self.rules.ttl else FIVE_MINUTES), previous
        return choice.write, choice.seconds

    def _stable_write(self, write: str, reason: str) -> str:
        """The lifetime of the breakpoints before the last. Each request reads the longest
        cached prefix and renews only that entry, so the snapshot's own entry is never
        renewed while the talk goes on, and is long gone when a compaction (or a rollback)
        rewrites the history after it: the whole prompt is written again. A session whose
        history was rewritten once will likely be again, so from then on the prefix asks
        for an hour where the provider offers it (0.75x more when it is written), and the
        next rewrite reads it instead of writing it again."""
        rewritten = reason == HISTORY_REWRITTEN or self.tracker.history_rewrites > 0
        if write == OFF or not self.rules.long_ttl or not rewritten:
            return ""
        return ONE_HOUR

    def _image_extra(self, chunks: PromptChunks) -> int:
        return self.assembler.image_tokens(chunks) - IMAGE_FLAT_TOKENS * len(chunks.images)

    def build(self, draft: Draft, now: float | None) -> tuple[Built, Draft]:
        budget = self.facts.input_budget
        built = self.assemble(draft, now)
        steps = (
            self._drop_suggested,
            self._rebuild,
            self._window_history,
            self._drop_optional,
            self._shed_files,
            self._truncate_message,
            self._truncate_system,
        )
        for step in steps:
            if built.tokens <= budget:
                break
            built, draft = step(draft, built, now)
        return built, draft

    def _drop_suggested(self, draft: Draft, built: Built, now: float | None) -> tuple[Built, Draft]:
        """The suggestions go first: they are acdc's guess, everything else was chosen."""
        if not draft.inputs.suggested:
            return built, draft
        draft = replace(draft, inputs=replace(draft.inputs, suggested=""))
        return self.assemble(draft, now), draft

    def _rebuild(self, draft: Draft, built: Built, now: float | None) -> tuple[Built, Draft]:
        if self.scheme != "acdc":
            return built, draft
        draft = replace(draft, rebuild=True)
        return self.assemble(draft, now), draft

    def _window_history(self, draft: Draft, built: Built, now: float | None) -> tuple[Built, Draft]:
        history = list(draft.inputs.history)
        original = len(history)
        keys_by_id = {id(m): k for m, k in zip(history, self._keys(draft), strict=True)}
        allowance = self.counter.count(history)
        while built.tokens > self.facts.input_budget and history:
            allowance -= max(1, built.tokens - self.facts.input_budget)
            history = window_history(history, max(0, allowance), self.counter)
            keys = tuple(keys_by_id.get(id(m)) for m in history)
            inputs = replace(draft.inputs, history=tuple(history), history_keys=keys)
            draft = replace(draft, inputs=inputs, rebuild=self.scheme == "acdc")
            built = self.assemble(draft, now)
        if len(history) != original:
            text = "Older messages were left out of this request to fit the model's window."
            draft.notices.append(Notice("history_trimmed", text))
        return built, draft

    @staticmethod
    def _keys(draft: Draft) -> tuple[str | None, ...]:
        inputs = draft.inputs
        return inputs.history_keys or tuple(f"history:{i}" for i in range(len(inputs.history)))

    def _drop_optional(self, draft: Draft, built: Built, now: float | None) -> tuple[Built, Draft]:
        for name, empty in (
            ("metadata", ()),
            ("reference", ""),
            ("file_tree", ""),
            ("repo_map", ""),
            ("instructions", ""),
        ):
            if built.tokens <= self.facts.input_budget:
                break
            if getattr(draft.inputs, name):
                draft = replace(draft, inputs=replace(draft.inputs, **{name: empty}))
                what = _DROPPED.get(name, f"The {name.replace('_', ' ')} was")
                draft.notices.append(
                    Notice(
                        "section_dropped",
                        f"{what} left out of this request to fit the model's window.",
                    )
                )
                built = self.assemble(draft, now)
        return built, draft

    def _shed_files(self, draft: Draft, built: Built, now: float | None) -> tuple[Built, Draft]:
        files = list(draft.inputs.files)
        # Unpinned before pinned, largest first within each; sorted by path on ties so
        # the choice is deterministic.
        order = sorted(
            files, key=lambda f: (f[0] in draft.pinned, -self.counter.count_text(f[1]), f[0])
        )
        for path, _ in order:
            if built.tokens <= self.facts.input_budget:
                break
            files = [f for f in files if f[0] != path]
            draft.shed.append(path)
            draft = replace(draft, inputs=replace(draft.inputs, files=tuple(files)))
            built = self.assemble(draft, now)
        return built, draft

    def _truncate_message(
        self, draft: Draft, built: Built, now: float | None
    ) -> tuple[Built, Draft]:
        return self._truncate(draft, built, now, "user_content", "message_truncated")

    def _truncate_system(
        self, draft: Draft, built: Built, now: float | None
    ) -> tuple[Built, Draft]:
        return self._truncate(draft, built, now, "system_prompt", "system_truncated")

    def _truncate(
        self, draft: Draft, built: Built, now: float | None, name: str, kind: str
    ) -> tuple[Built, Draft]:
        original: str = getattr(draft.inputs, name)
        keep = len(original)
        while built.tokens > self.facts.input_budget and keep > 0:
            over = built.tokens - self.facts.input_budget
            # At least one character per token over, usually about four.
            keep = max(0, keep - max(over * 3, 1) - 80)
            draft = replace(
                draft, inputs=replace(draft.inputs, **{name: truncate_text(original, keep)})
            )
            built = self.assemble(draft, now)
        if built.tokens > self.facts.input_budget:
            draft = replace(draft, inputs=replace(draft.inputs, **{name: ""}))
            built = self.assemble(draft, now)
        if built.tokens > self.facts.input_budget and name == "user_content":
            draft = replace(draft, inputs=replace(draft.inputs, images=()))
            built = self.assemble(draft, now)
        if getattr(draft.inputs, name) != original:
            label = "Your message" if name == "user_content" else "The system prompt"
            draft.notices.append(Notice(kind, f"{label} was truncated to fit the model's window."))
        return built, draft
