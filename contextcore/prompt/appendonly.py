"""acdc's cache layout: a snapshot of the documents, then an append-only stream.

Why: a provider cache only hits on an exact prefix, so moving an item between tiers (the
seed scheme) rewrites everything after it. Here the prompt only ever grows at the end:
  L0 system prompt + the repo map as of the snapshot | L1 snapshot of files/tree/reference
  taken at the last rebuild | L2 history, with "context update" pairs spliced in where a
  change was first seen, and the manifest of current versions | tail: map focus, current
  message.
A file edited after the snapshot is carried as an update (a unified diff against the last
full copy when that is at most `diff_ratio` of the file's tokens, else the full text)
labelled with its new version; the manifest names the current version of every selected
file, so the model is never unsure which copy is current. A removed file gets a notice; a
file selected again gets one too when its last full copy is still in the prompt and
current (else a diff against that copy, or the full text).
The manifest stays where it was first sent while it says the same thing, so it is part of
the cached prefix the next request repeats (at the end of the prompt it would break every
next request's prefix right after the history); a changed manifest is sent at the end,
after the older ones, and the last one is the one that holds.
The layout is rebuilt (fresh snapshot, no updates) only when the prefix is lost anyway:
first request, system prompt changed, history rewritten (compaction,
truncation, windowing), cache expired (the lifetime the last request wrote, `written_ttl`,
else `cache_ttl_seconds`, since the last request, when the caller passes a clock; nothing
written means nothing to keep) - or when stale copies pass `stale_budget_tokens`.
Pure: `plan_layout` returns a new state and never mutates its input.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from contextcore.llm import Message
from contextcore.prompt.revisions import make_diff
from contextcore.tokens import TokenCounter


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def history_digest(history: Sequence[Message]) -> str:
    return digest(json.dumps([[m.get("role"), m.get("content")] for m in history], sort_keys=True))


@dataclass(frozen=True)
class Doc:
    """A document the layout carries: `file:<path>`, `map`, `tree` or `reference`."""

    key: str
    text: str


@dataclass(frozen=True)
class Entry:
    """One copy of a document in the prompt. `form` is full, diff (against version `base`),
    removed, or restored (selected again with its full copy of version `base` still in the
    prompt: a notice, no text); `blob` is the digest of the text in `LayoutState.blobs`."""

    key: str
    version: int
    form: str
    blob: str = ""
    base: int | None = None


@dataclass(frozen=True)
class Update:
    """Entries shown right before history message `anchor`."""

    anchor: int
    entries: tuple[Entry, ...]


@dataclass(frozen=True)
class LayoutPolicy:
    stale_budget_tokens: int
    cache_ttl_seconds: float = 300.0
    diff_ratio: float = 0.5
    update_style: str = "auto"  # "full" never sends diffs
    # The provider's prices, as multiples of the input price: a cached token read, and a
    # token of a rebuilt prefix (its write premium; 1.0 where writes cost nothing extra).
    read_price: float = 0.1
    rebuild_price: float = 1.25
    # The caller sends keep-alive refreshes while the person is away (`cachepolicy`), so
    # the lifetime to write is priced with them.
    keep_alive: bool = False


HISTORY_REWRITTEN = "history rewritten"  # a compaction, rollback or retry changed it


@dataclass(frozen=True)
class LayoutState:
    l0_digest: str
    snapshot: tuple[Entry, ...]
    updates: tuple[Update, ...] = ()
    blobs: Mapping[str, str] = field(default_factory=dict)
    history_len: int = 0
    history_digest: str = ""
    last_at: float | None = None
    written_ttl: float | None = None  # seconds the last request's writes live; 0: none
    # (anchor, blob) of each manifest sent since the rebuild, shown before history[anchor]
    manifests: tuple[tuple[int, str], ...] = ()
    stale_paid: float = 0.0  # stale tokens read since the rebuild, at the read price

    def presented(self) -> dict[str, Entry]:
        """The newest entry of every document still in the prompt (removed ones are not)."""
        shown: dict[str, Entry] = {e.key: e for e in self.snapshot}
        for update in self.updates:
            for entry in update.entries:
                if entry.form == "removed":
                    shown.pop(entry.key, None)
                else:
                    shown[entry.key] = entry
        return shown

    def full_copies(self) -> dict[str, Entry]:
        """The newest full copy of every document: what a diff is taken against."""
        copies = {e.key: e for e in self.snapshot}
        for update in self.updates:
            copies.update({e.key: e for e in update.entries if e.form == "full"})
        return copies

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LayoutState:
        def entries(items: Sequence[Mapping[str, Any]]) -> tuple[Entry, ...]:
            return tuple(Entry(**item) for item in items)

        return cls(
            l0_digest=data["l0_digest"],
            snapshot=entries(data["snapshot"]),
            updates=tuple(Update(u["anchor"], entries(u["entries"])) for u in data["updates"]),
            blobs=dict(data["blobs"]),
            history_len=data["history_len"],
            history_digest=data["history_digest"],
            last_at=data["last_at"],
            written_ttl=data.get("written_ttl"),
            manifests=tuple((int(a), str(b)) for a, b in data.get("manifests", ())),
            stale_paid=float(data.get("stale_paid", 0.0)),
        )


def bump_versions(
    versions: Mapping[str, Sequence[Any]], docs: Sequence[Doc]
) -> dict[str, list[Any]]:
    """{key: [version, digest]}: a document's version goes up whenever its text changes."""
    result = {key: list(value) for key, value in versions.items()}
    for doc in docs:
        text_digest = digest(doc.text)
        old = result.get(doc.key)
        if old is None:
            result[doc.key] = [1, text_digest]
        elif old[1] != text_digest:
            result[doc.key] = [old[0] + 1, text_digest]
    return result


def plan_layout(
    state: LayoutState | None,
    *,
    l0_text: str,
    docs: Sequence[Doc],
    versions: Mapping[str, Sequence[Any]],
    history: Sequence[Message],
    now: float | None,
    counter: TokenCounter,
    policy: LayoutPolicy,
    manifest: str,
) -> tuple[LayoutState, str]:
    """The layout for this request and why it was rebuilt ("" when it was only appended to).
    `versions` must already include `docs` (see `bump_versions`); `manifest` is the text
    naming the current versions."""
    reason = _rebuild_reason(state, digest(l0_text), history, now, policy)
    if state is None or reason:
        fresh = _rebuild(l0_text, docs, versions, history, now)
        return _with_manifest(fresh, manifest, len(history)), reason
    entries, blobs = _changes(state, docs, versions, counter, policy)
    updates = state.updates + ((Update(len(history), entries),) if entries else ())
    new_state = replace(
        state,
        updates=updates,
        blobs={**state.blobs, **blobs},
        history_len=len(history),
        history_digest=history_digest(history),
        last_at=now,
    )
    new_state = _with_manifest(new_state, manifest, len(history))
    stale = stale_tokens(new_state, counter)
    paid = state.stale_paid + stale * policy.read_price
    reason = ""
    if stale > policy.stale_budget_tokens:
        reason = "stale copies over budget"
    elif stale and paid >= _rebuild_premium(new_state, history, counter, policy):
        reason = "stale copies cost more than a rebuild"
    if reason:
        fresh = _rebuild(l0_text, docs, versions, history, now)
        return _with_manifest(fresh, manifest, len(history)), reason
    return replace(new_state, stale_paid=paid), ""


def _rebuild_premium(
    state: LayoutState, history: Sequence[Message], counter: TokenCounter, policy: LayoutPolicy
) -> float:
    """What a rebuild costs over reading the prefix from the cache: the documents and the
    history sent again at the rebuild price instead of the read price. Stale copies are
    kept until reading them has cost that much (then a rebuild would have been no
    dearer, whatever the rest of the session brings: rent, then buy)."""
    shown = state.presented().values()
    tokens = sum(counter.count_text(state.blobs.get(e.blob, "")) for e in shown)
    tokens += counter.count(list(history))
    return tokens * max(0.0, policy.rebuild_price - policy.read_price)


def _with_manifest(state: LayoutState, manifest: str, anchor: int) -> LayoutState:
    """`state` with `manifest` as its last manifest: kept where it is when the last one
    says the same, else added before history[anchor] (the end of the history)."""
    key = digest(manifest)
    if state.manifests and state.manifests[-1][1] == key:
        return state
    return replace(
        state,
        manifests=(*state.manifests, (anchor, key)),
        blobs={**state.blobs, key: manifest},
    )


def _rebuild_reason(
    state: LayoutState | None,
    l0_digest: str,
    history: Sequence[Message],
    now: float | None,
    policy: LayoutPolicy,
) -> str:
    if state is None:
        return "first request"
    if state.l0_digest != l0_digest:
        return "system prompt changed"
    if len(history) < state.history_len or (
        history_digest(history[: state.history_len]) != state.history_digest
    ):
        return HISTORY_REWRITTEN
    return expiry_reason(state.last_at, state.written_ttl, now, policy.cache_ttl_seconds)


def expiry_reason(
    written_at: float | None, written_ttl: float | None, now: float | None, default_ttl: float
) -> str:
    """Why a prefix written at `written_at` to live `written_ttl` seconds (None: not known,
    `default_ttl`) is gone at `now` ("" when it may still be cached, or there is no clock)."""
    if now is None or written_at is None:
        return ""
    lifetime = default_ttl if written_ttl is None else written_ttl
    if now - written_at > lifetime:
        return "provider cache expired" if lifetime else "nothing was cached"
    return ""


def _rebuild(
    l0_text: str,
    docs: Sequence[Doc],
    versions: Mapping[str, Sequence[Any]],
    history: Sequence[Message],
    now: float | None,
) -> LayoutState:
    snapshot = tuple(Entry(d.key, versions[d.key][0], "full", digest(d.text)) for d in docs)
    return LayoutState(
        l0_digest=digest(l0_text),
        snapshot=snapshot,
        blobs={digest(d.text): d.text for d in docs},
        history_len=len(history),
        history_digest=history_digest(history),
        last_at=now,
    )


def _changes(
    state: LayoutState,
    docs: Sequence[Doc],
    versions: Mapping[str, Sequence[Any]],
    counter: TokenCounter,
    policy: LayoutPolicy,
) -> tuple[tuple[Entry, ...], dict[str, str]]:
    shown, copies = state.presented(), state.full_copies()
    entries: list[Entry] = []
    blobs: dict[str, str] = {}
    for doc in docs:
        version = versions[doc.key][0]
        if doc.key in shown and shown[doc.key].version == version:
            continue
        full = copies.get(doc.key)
        if full is not None and full.version == version:
            # Selected again, unchanged, and its copy is still in the prompt: a notice
            # points at that copy instead of sending (and paying for) the text again.
            entries.append(Entry(doc.key, version, "restored", base=full.version))
            continue
        text, form, base = doc.text, "full", None
        diffable = doc.key.startswith("file:") or doc.key == "map"
        if full is not None and diffable and policy.update_style == "auto":
            diff = make_diff(state.blobs[full.blob], doc.text)
            if diff is not None and counter.count_text(diff) <= policy.diff_ratio * max(
                1, counter.count_text(doc.text)
            ):
                text, form, base = diff, "diff", full.version
        blobs[digest(text)] = text
        entries.append(Entry(doc.key, version, form, digest(text), base))
    current = {doc.key for doc in docs}
    for key in sorted(set(shown) - current):
        entries.append(Entry(key, shown[key].version, "removed"))
    return tuple(entries), blobs


def stale_tokens(state: LayoutState, counter: TokenCounter) -> int:
    """Tokens of copies in the prompt that no current version needs any more."""
    shown = state.presented()
    needed = {(e.key, e.version, e.form) for e in shown.values()}
    copies = state.full_copies()
    needed |= {
        (k, copies[k].version, "full") for k, e in shown.items() if e.form in ("diff", "restored")
    }
    everything = list(state.snapshot) + [e for u in state.updates for e in u.entries]
    old_manifests = [blob for _, blob in state.manifests[:-1]]
    return sum(
        counter.count_text(state.blobs.get(e.blob, ""))
        for e in everything
        if (e.key, e.version, e.form) not in needed
    ) + sum(counter.count_text(state.blobs.get(blob, "")) for blob in old_manifests)
