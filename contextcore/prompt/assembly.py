"""PromptAssembler: turns the engine's state into the exact messages sent to the model.

Like aider's chat_chunks, a prompt is an ordered dataclass of message groups (`TierBlock`s
of `Chunk`s, each chunk tagged with its budget section), and `add_cache_markers` is the one
small function that places `cache_control` breakpoints: at most four, one at the end of
each non-empty cached block whose prefix reaches the model's minimum cacheable size.
Three layouts: `flat` (system, files, history, message), `tiered` (seed 000: L0..L3 by
stability, then tree, reference, metadata, active files, active history, message) and
`appendonly` (acdc, see `contextcore.prompt.appendonly`). Invariant: pure and deterministic -
the same inputs give byte-identical messages, which is what makes provider caches hit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from contextcore.llm import Message
from contextcore.prompt.appendonly import Entry, LayoutState
from contextcore.prompt.revisions import format_diff_block, format_file_block, format_manifest
from contextcore.tokens import IMAGE_FLAT_TOKENS, TokenCounter, count_image

MAX_BREAKPOINTS = 4
TIER_ORDER = ("L0", "L1", "L2", "L3", "active")
FILES_ACK = "Ok, I have these files."
UPDATE_HEADER = "# Context update"
FOCUS_HEADER = "# Repository focus\nDefinitions named in the recent messages:\n"
MAP_KEY = "map"


@dataclass(frozen=True)
class ImageInput:
    mime: str
    data_url: str
    width: int
    height: int


@dataclass(frozen=True)
class PromptInputs:
    system_prompt: str
    # Project instructions as sent (`Instructions.text()`): in the system part, after the
    # system prompt and before the map, so they are cached with it.
    instructions: str = ""
    repo_map: str = ""
    # The map's per-turn part (ranked towards recent messages): after the history, never
    # in the cached prefix.
    map_focus: str = ""
    # The artifact trail (`contextcore.conversation.artifacts`) when the history was cut: in
    # the tail too, so a new edit or command never rewrites the cached prefix.
    trail: str = ""
    # "Suggested for this message" (`contextcore.prompt.suggested`): last in the tail.
    suggested: str = ""
    file_tree: str = ""
    reference: str = ""
    metadata: tuple[str, ...] = ()
    files: tuple[tuple[str, str], ...] = ()  # (path, content) in prompt order
    history: tuple[Message, ...] = ()
    # Stability keys parallel to `history` (None for an omission marker).
    history_keys: tuple[str | None, ...] | None = None
    user_content: str = ""
    images: tuple[ImageInput, ...] = ()


@dataclass(frozen=True)
class Chunk:
    section: str
    message: Message
    # (section, text) pieces when one message spans sections (system + repository map).
    parts: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class TierBlock:
    tier: str
    chunks: tuple[Chunk, ...]
    cached: bool = False


@dataclass(frozen=True)
class PromptChunks:
    blocks: tuple[TierBlock, ...]
    images: tuple[ImageInput, ...] = ()
    provider: str = "openai"
    notes: dict[str, Any] = field(default_factory=dict)
    cache_write: str = "5m"  # breakpoints' lifetime: "5m", "1h", or "off" for none
    # The lifetime of every breakpoint but the last ("" for `cache_write`): the stable
    # prefix (system, snapshot) outlives the history after it (see `request._cache_write`).
    stable_write: str = ""


def l0_text(inputs: PromptInputs) -> str:
    """What the append-only layout's L0 stands for: a change rebuilds the prefix once."""
    return inputs.system_prompt + inputs.instructions


def _text(role: str, content: str) -> Message:
    return {"role": role, "content": content}


def _pair(section: str, user: str, ack: str) -> list[Chunk]:
    return [Chunk(section, _text("user", user)), Chunk(section, _text("assistant", ack))]


def _system_chunk(inputs: PromptInputs, extra: str = "") -> Chunk:
    parts = [("system", inputs.system_prompt)]
    if inputs.instructions:
        parts.append(("instructions", inputs.instructions))
    if inputs.repo_map:
        parts.append(("repo_map", "\n\n# Repository Structure\n" + inputs.repo_map))
    if extra:
        parts.append(("active_files", extra))
    return Chunk("system", _text("system", "".join(t for _, t in parts)), tuple(parts))


def _context_pairs(
    inputs: PromptInputs, *, tree: bool = True, reference: bool = True
) -> list[Chunk]:
    chunks: list[Chunk] = []
    if tree and inputs.file_tree:
        chunks += _pair("repo_map", "# Repository Files\n\n" + inputs.file_tree, "Ok.")
    if reference and inputs.reference:
        chunks += _pair(
            "reference_files", "# Reference\n\n" + inputs.reference, "Ok, I have read it."
        )
    return chunks


def _focus_pair(inputs: PromptInputs) -> list[Chunk]:
    if not inputs.map_focus:
        return []
    return _pair("repo_map", FOCUS_HEADER + inputs.map_focus, "Ok.")


def _trail_pair(inputs: PromptInputs) -> list[Chunk]:
    return _pair("trail", inputs.trail, "Ok.") if inputs.trail else []


def _suggested_pair(inputs: PromptInputs) -> list[Chunk]:
    return _pair("suggested", inputs.suggested, "Ok.") if inputs.suggested else []


def _metadata_pair(inputs: PromptInputs) -> list[Chunk]:
    if not inputs.metadata:
        return []
    return _pair("metadata", "# Other Context Objects\n" + "\n".join(inputs.metadata), "Ok.")


def _files_pair(header: str, files: Iterable[tuple[str, str]]) -> list[Chunk]:
    blocks = [format_file_block(path, text) for path, text in files]
    if not blocks:
        return []
    return _pair("active_files", header + "\n\n" + "\n\n".join(blocks), FILES_ACK)


def _current_message(inputs: PromptInputs) -> Chunk:
    if not inputs.images:
        return Chunk("current_message", _text("user", inputs.user_content))
    content: list[dict[str, Any]] = [{"type": "text", "text": inputs.user_content}]
    content += [{"type": "image_url", "image_url": {"url": i.data_url}} for i in inputs.images]
    return Chunk("current_message", {"role": "user", "content": content})


def wire_message(message: Message) -> Message:
    """A history message as sent: role and content only. The engine's own annotations
    (`id`, `pinned`) never reach a provider, and never change the cached bytes."""
    return {"role": message["role"], "content": message["content"]}


def _history_chunks(history: Sequence[Message]) -> list[Chunk]:
    return [Chunk("history", wire_message(message)) for message in history]


class PromptAssembler:
    def __init__(self, counter: TokenCounter, *, min_cacheable_tokens: int, provider: str):
        self.counter = counter
        self.min_cacheable_tokens = min_cacheable_tokens
        self.provider = provider

    def _chunks(self, blocks: Sequence[TierBlock], inputs: PromptInputs) -> PromptChunks:
        kept = tuple(block for block in blocks if block.chunks)
        return PromptChunks(kept, inputs.images, self.provider)

    def flat(self, inputs: PromptInputs, *, cache_last: bool = False) -> PromptChunks:
        """System, tree, reference, metadata, working files, history, suggestions, message;
        with `cache_last` one breakpoint on the final message."""
        chunks = [_system_chunk(inputs), *_context_pairs(inputs), *_metadata_pair(inputs)]
        chunks += _trail_pair(inputs) + _focus_pair(inputs)
        chunks += _files_pair("# Working Files", inputs.files)
        chunks += _history_chunks(inputs.history) + _suggested_pair(inputs)
        chunks += [_current_message(inputs)]
        return self._chunks([TierBlock("active", tuple(chunks), cached=cache_last)], inputs)

    def tiered(self, inputs: PromptInputs, tier_of: Callable[[str], str]) -> PromptChunks:
        """Seed 000's tiered layout; `tier_of` maps `file:<path>` / `history:<n>` to a tier."""
        files_by_tier: dict[str, list[tuple[str, str]]] = {t: [] for t in TIER_ORDER}
        for path, text in inputs.files:
            files_by_tier[tier_of(f"file:{path}")].append((path, text))
        history_by_tier = self._history_tiers(inputs, tier_of)
        l0_files = "".join("\n\n" + format_file_block(p, t) for p, t in files_by_tier["L0"])
        blocks = [TierBlock("L0", (_system_chunk(inputs, l0_files), *history_by_tier["L0"]), True)]
        for tier in ("L1", "L2", "L3"):
            header = f"# Reference Files ({tier})"
            chunks = _files_pair(header, files_by_tier[tier]) + history_by_tier[tier]
            blocks.append(TierBlock(tier, tuple(chunks), cached=True))
        active = _context_pairs(inputs) + _metadata_pair(inputs) + _trail_pair(inputs)
        active += _focus_pair(inputs)
        active += _files_pair("# Working Files", files_by_tier["active"])
        active += history_by_tier["active"] + _suggested_pair(inputs)
        active += [_current_message(inputs)]
        blocks.append(TierBlock("active", tuple(active)))
        return self._chunks(blocks, inputs)

    @staticmethod
    def _history_tiers(
        inputs: PromptInputs, tier_of: Callable[[str], str]
    ) -> dict[str, list[Chunk]]:
        keys = inputs.history_keys or tuple(f"history:{i}" for i in range(len(inputs.history)))
        by_tier: dict[str, list[Chunk]] = {t: [] for t in TIER_ORDER}
        # Tiers may only get more volatile down the history, or messages would be reordered.
        level = 0
        for key, message in zip(keys, inputs.history, strict=True):
            tier = tier_of(key) if key else "active"
            level = max(level, TIER_ORDER.index(tier))
            by_tier[TIER_ORDER[level]].append(Chunk("history", wire_message(message)))
        return by_tier

    def appendonly(self, inputs: PromptInputs, layout: LayoutState) -> PromptChunks:
        """acdc's layout: L0 system, L1 snapshot, L2 history with updates, then the tail.
        The map in L0 is the one of the snapshot; later changes to it are updates."""
        snapshot = [e for e in layout.snapshot if e.form == "full"]
        shown_map = [layout.blobs[e.blob] for e in snapshot if e.key == MAP_KEY]
        system = _system_chunk(replace(inputs, repo_map=shown_map[0] if shown_map else ""))
        tree = [e for e in snapshot if e.key == "tree"]
        reference = [e for e in snapshot if e.key == "reference"]
        l1: list[Chunk] = []
        if tree:
            l1 += _pair("repo_map", "# Repository Files\n\n" + layout.blobs[tree[0].blob], "Ok.")
        if reference:
            text = "# Reference\n\n" + layout.blobs[reference[0].blob]
            l1 += _pair("reference_files", text, "Ok, I have read it.")
        files = [e for e in snapshot if e.key.startswith("file:")]
        if files:
            body = "\n\n".join(_entry_text(e, layout) for e in files)
            l1 += _pair("active_files", _SNAPSHOT_HEADER + body, FILES_ACK)
        l2 = self._stream(inputs.history, layout)
        tail = _trail_pair(inputs) + _focus_pair(inputs) + _suggested_pair(inputs)
        blocks = [
            TierBlock("L0", (system,), cached=True),
            TierBlock("L1", tuple(l1), cached=True),
            TierBlock("L2", tuple(l2), cached=True),
            TierBlock("active", (*tail, _current_message(inputs))),
        ]
        return self._chunks(blocks, inputs)

    @staticmethod
    def _stream(history: Sequence[Message], layout: LayoutState) -> list[Chunk]:
        by_anchor = {u.anchor: u for u in layout.updates}
        manifests: dict[int, list[str]] = {}
        for anchor, blob in layout.manifests:
            manifests.setdefault(anchor, []).append(layout.blobs[blob])
        chunks: list[Chunk] = []
        for index in range(len(history) + 1):
            if index in by_anchor:
                entries = by_anchor[index].entries
                # The map's changes go in a pair of their own, counted as the map's tokens.
                for section, mine in (
                    ("active_files", [e for e in entries if e.key != MAP_KEY]),
                    ("repo_map", [e for e in entries if e.key == MAP_KEY]),
                ):
                    if mine:
                        body = "\n\n".join(_entry_text(e, layout) for e in mine)
                        chunks += _pair(section, _UPDATE_INTRO + body, "Noted.")
            for text in manifests.get(index, ()):
                chunks += _pair("metadata", text, "Ok.")
            if index < len(history):
                chunks.append(Chunk("history", wire_message(history[index])))
        return chunks

    def to_messages(self, chunks: PromptChunks) -> list[Message]:
        return add_cache_markers(chunks, self.counter, self.min_cacheable_tokens)

    def image_tokens(self, chunks: PromptChunks) -> int:
        return sum(count_image(i.width, i.height, chunks.provider) for i in chunks.images)

    def breakdown(self, chunks: PromptChunks) -> dict[str, Any]:
        """Tokens per budget section and per tier, and where the breakpoints are."""
        sections: dict[str, int] = {}
        tiers: dict[str, int] = {}
        for block in chunks.blocks:
            for chunk in block.chunks:
                tokens = self.counter.count(chunk.message)
                for section, text in chunk.parts:
                    if section != chunk.section:
                        part = self.counter.count_text(text)
                        sections[section] = sections.get(section, 0) + part
                        tokens -= part
                sections[chunk.section] = sections.get(chunk.section, 0) + tokens
                tiers[block.tier] = tiers.get(block.tier, 0) + self.counter.count(chunk.message)
        extra = self.image_tokens(chunks) - IMAGE_FLAT_TOKENS * len(chunks.images)
        sections["current_message"] = sections.get("current_message", 0) + extra
        tiers["active"] = tiers.get("active", 0) + extra
        messages = self.to_messages(chunks)
        marks = [i for i, m in enumerate(messages) if has_marker(m)]
        return {
            "sections": sections,
            "tiers": tiers,
            "breakpoints": marks,
            "total": sum(tiers.values()),
        }


_SNAPSHOT_HEADER = (
    "# Working Files\nThe files in context, each labelled with its version. A later "
    "context update may supersede a version shown here; the last Current context list "
    "names the version that is current.\n\n"
)
_UPDATE_INTRO = (
    UPDATE_HEADER + "\nThese changed since they were shown above. Each version here "
    "supersedes every earlier copy of the same file.\n\n"
)


def manifest_text(inputs: PromptInputs, versions: Mapping[str, Sequence[Any]]) -> str:
    """The "Current context" list for `inputs`' files at `versions`, with the metadata."""
    current = {p: int(versions[f"file:{p}"][0]) for p, _ in inputs.files}
    return format_manifest(current, inputs.metadata)


def _entry_text(entry: Entry, layout: LayoutState) -> str:
    name = entry.key.split(":", 1)[1] if entry.key.startswith("file:") else entry.key
    if entry.form == "removed":
        return f"{name} was removed from the context: no copy of it above is current."
    if entry.form == "restored":
        if not entry.key.startswith("file:"):
            return f"The {name} section is back, unchanged: its last full copy above is current."
        return (
            f"{name} is back in the context, unchanged: its copy above labelled "
            f"version {entry.version} is current again."
        )
    text = layout.blobs[entry.blob]
    if entry.key == MAP_KEY and entry.form == "diff":
        return f"The repository map changed (unified diff of the map above):\n{text}"
    if not entry.key.startswith("file:"):
        return f"The {name} section changed; this version supersedes the earlier one:\n{text}"
    if entry.form == "diff":
        assert entry.base is not None
        return format_diff_block(name, text, entry.version, entry.base)
    return format_file_block(name, text, entry.version)


def has_marker(message: Message) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any("cache_control" in b for b in content)


def _mark(message: Message, ttl: str = "5m") -> Message:
    content = message["content"]
    if isinstance(content, str):
        blocks: list[dict[str, Any]] = [{"type": "text", "text": content}]
    else:
        blocks = [dict(block) for block in content]
    marker = {"type": "ephemeral", **({"ttl": ttl} if ttl == "1h" else {})}
    blocks[-1] = {**blocks[-1], "cache_control": marker}
    return {**message, "content": blocks}


def add_cache_markers(
    chunks: PromptChunks, counter: TokenCounter, min_tokens: int
) -> list[Message]:
    """Messages with a breakpoint ending each non-empty cached block whose prefix holds at
    least `min_tokens` (a shorter prefix cannot be cached, a marker there would only cost),
    keeping the last `MAX_BREAKPOINTS` when there are more; the last asks for the chunks'
    `cache_write` lifetime, the others for `stable_write` (or the same), and "off" places
    none."""
    messages: list[Message] = []
    ends: list[int] = []
    prefix = 0
    for block in chunks.blocks:
        for chunk in block.chunks:
            messages.append(chunk.message)
            prefix += counter.count(chunk.message)
        if block.cached and block.chunks and prefix >= min_tokens:
            ends.append(len(messages) - 1)
    if chunks.cache_write == "off":
        return messages
    kept = ends[-MAX_BREAKPOINTS:]
    for index in kept:
        last = index == kept[-1]
        ttl = chunks.cache_write if last else chunks.stable_write or chunks.cache_write
        messages[index] = _mark(messages[index], ttl)
    return messages
