"""Apply a batch of edit ops to file texts: new texts and one result per op.

`apply_edits` takes the files as texts (path -> text; a missing path is an absent file)
and applies each op in order to the text the earlier ops left (`contextcore.edits.replace`
places one op). A file that changed since the model read it (the op's base sha256 is not
the file's, or the seen text is not the file) is a three-way merge when the text the model
saw is known: the file's ops apply in order to that text, then one merge (`merge3`, the
semantics of `git merge-file`) brings them into the current text; overlapping changes are
a conflict and nothing of them is written, the same change on both sides is already
applied. An op the seen text does not hold is tried on the current text. When only the
base's hash is known, an op re-anchors: it applies only where its old text matches once,
as whole words, in the current text, and is a conflict otherwise. With `hide`, all of this
runs on the text the model was shown (`contextcore.edits.shown`) and the redacted values
are put back untouched. BOM, line endings and the final newline are kept. Non-goals:
paths and the disk (`chat/repo`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace

from contextcore.edits.matcher import PASSES
from contextcore.edits.merge import Merge, matching_blocks, merge3
from contextcore.edits.ops import EditOp, EditResult, Outcome, text_sha256
from contextcore.edits.replace import Context, apply_one
from contextcore.edits.shown import REDACTED_REFUSAL, Hide, View, view

CONFLICT_CONTEXT = 2  # lines shown around a conflicting region


@dataclass(frozen=True)
class EditBatch:
    texts: dict[str, str | None]  # every changed path's new text (None: deleted)
    results: list[EditResult]


@dataclass(frozen=True)
class _Facts:
    """What is known of the version an op was made against (from the real texts)."""

    stale: bool  # the file is not the version the model read
    seen_is_base: bool  # the seen text is that version
    known: bool  # the version is known at all (a base hash or a seen text)


def apply_edits(
    ops: Sequence[EditOp],
    files: Mapping[str, str | None],
    *,
    seen: Mapping[str, str] | None = None,
    passes: Collection[str] = PASSES,
    hide: Hide | None = None,
) -> EditBatch:
    """Apply `ops` to `files`; `seen` holds the texts the model read, where known; `hide`
    gives the spans of a text the model was shown as markers (start, end, marker)."""
    seen = seen or {}
    paths = {op.path for op in ops}
    now = {p: view(files[p], hide) for p in paths if files.get(p) is not None}
    before = {p: view(seen[p], hide) for p in paths if p in seen}
    facts = [_facts(op, files.get(op.path), seen.get(op.path)) for op in ops]
    shown = {p: now[p].shown if p in now else t for p, t in files.items()}
    run = _Run(ops, shown, {p: v.shown for p, v in before.items()}, facts, passes)
    for path in paths:
        views = [v for v in (now.get(path), before.get(path)) if v is not None]
        run.markers[path] = frozenset().union(*(v.markers for v in views))
        run.opaque[path] = any(v.opaque for v in views)
    run.apply()
    return _real(run, files, now)


def _facts(op: EditOp, original: str | None, seen: str | None) -> _Facts:
    if op.base_sha256 is not None:
        stale = op.base_sha256 != (text_sha256(original) if original is not None else None)
        return _Facts(stale, seen is not None and text_sha256(seen) == op.base_sha256, True)
    return _Facts(seen is not None and seen != original, seen is not None, seen is not None)


class _Run:
    """One batch on shown texts: the ops in order, then the merges of stale files."""

    def __init__(self, ops, files, seen, facts: list[_Facts], passes) -> None:
        self.ops, self.files, self.seen, self.facts, self.passes = ops, files, seen, facts, passes
        self.current: dict[str, str | None] = dict(files)
        self.results: list[EditResult | None] = [None] * len(ops)
        self.markers: dict[str, frozenset[str]] = {}
        self.opaque: dict[str, bool] = {}

    def apply(self) -> None:
        merging = {
            op.path
            for op, fact in zip(self.ops, self.facts, strict=True)
            if fact.stale and fact.seen_is_base and self.files.get(op.path) is not None
        }
        groups: dict[str, list[int]] = {}
        for index, op in enumerate(self.ops):
            if op.path in merging:
                groups.setdefault(op.path, []).append(index)
                continue
            fact, text = self.facts[index], self.current.get(op.path)
            unchanged = fact.known and not fact.stale and text == self.files.get(op.path)
            seen = self.seen.get(op.path) if fact.seen_is_base else None
            ctx = self.context(index, stale=fact.stale, seen=seen, unchanged=unchanged)
            self.take(ctx, text)
        for path, indices in groups.items():
            self.merge_group(path, indices)

    def context(self, index: int, **fields) -> Context:
        op = self.ops[index]
        paths = [p for p, t in self.current.items() if t is not None]
        markers = self.markers.get(op.path, frozenset())
        return Context(index, op, self.passes, paths, markers=markers, **fields)

    def take(self, ctx: Context, text: str | None) -> str | None:
        """Apply one op to `text`; its result is recorded, and its text kept when it applied."""
        if self.opaque.get(ctx.op.path) and ctx.op.kind != "delete":
            self.results[ctx.index] = ctx.result(Outcome.FAILED, reason=REDACTED_REFUSAL)
            return text
        attempt = apply_one(ctx, text)
        self.results[ctx.index] = attempt.result
        if attempt.result.outcome is Outcome.APPLIED:
            self.current[ctx.op.path] = attempt.text
            return attempt.text
        return text

    def merge_group(self, path: str, indices: list[int]) -> None:
        """The ops on a stale file: applied in order to the text the model saw, merged once
        into the current text; an op the seen text does not hold is tried on the result."""
        seen, ours = self.seen[path], self.current[path]
        theirs, placed, later = seen, [], []
        for index in indices:
            op = self.ops[index]
            if op.kind == "delete":
                reason = f"{path} changed since the model read it; deleting it would lose that."
                self.results[index] = EditResult(index, op, Outcome.CONFLICT, reason=reason)
                continue
            ctx = self.context(index, seen=seen, unchanged=theirs == seen)
            if self.opaque.get(path):
                self.results[index] = ctx.result(Outcome.FAILED, reason=REDACTED_REFUSAL)
                continue
            attempt = apply_one(ctx, theirs)
            if attempt.result.outcome is Outcome.APPLIED:
                theirs = attempt.text
                placed.append((index, attempt.result, theirs))
            elif attempt.missing:
                later.append(index)
            else:
                self.results[index] = attempt.result
        text = ours
        if placed:
            text = self.merged(path, seen, ours, theirs, placed)
        self.current[path] = text
        for index in later:
            ctx = self.context(index, stale=True, seen=seen)
            text = self.take(ctx, text)

    def merged(self, path: str, seen: str, ours, theirs: str, placed) -> str:
        merge = merge3(seen, ours, theirs)
        for index, result, after in placed:
            if merge.text is None:
                reason, closest = _conflict(path, merge, ours)
                fields = {"reason": reason, "closest": closest}
                self.results[index] = replace(result, outcome=Outcome.CONFLICT, **fields)
            elif merge.text == ours:
                self.results[index] = replace(result, outcome=Outcome.ALREADY_APPLIED)
            else:
                line = _line_in(after, merge.text, result.line)
                self.results[index] = replace(result, line=line, reanchored=True)
        if merge.text is None or merge.text == ours:
            return ours
        return merge.text


def _conflict(path: str, merge: Merge, ours: str) -> tuple[str, str]:
    """Why a merge conflicts, and the current lines where it does, numbered."""
    rows = ours.splitlines() or [""]
    spans = [(c.ours_start, max(c.ours_start, c.ours_end)) for c in merge.conflicts]
    where = ", ".join(f"{a}–{b}" if b > a else str(a) for a, b in spans)
    first, last = spans[0]
    low, high = max(1, first - CONFLICT_CONTEXT), min(len(rows), last + CONFLICT_CONTEXT)
    closest = "\n".join(f"{n:>5} | {rows[n - 1].rstrip()}" for n in range(low, high + 1))
    reason = (
        f"{path} changed since the model read it, and the change made since overlaps this "
        f"edit at line{'s' if len(spans) > 1 or last > first else ''} {where} of the current "
        "file; nothing was changed. Quote the current lines shown here."
    )
    return reason, closest


def _line_in(before: str, after: str, line: int) -> int:
    """Where line `line` of `before` stands in `after`."""
    at = line - 1
    for x, y, n in matching_blocks(before.splitlines(), after.splitlines()):
        if x <= at < x + n:
            return y + at - x + 1
        if x > at:
            return max(1, y - (x - at) + 1)
    return line


def _real(run: _Run, files: Mapping[str, str | None], now: dict[str, View]) -> EditBatch:
    """The batch in the files' own texts: each redacted value back in its place."""
    results = [r for r in run.results if r is not None]
    texts: dict[str, str | None] = {}
    for path, text in run.current.items():
        if text is not None and path in now:
            real = now[path].to_real(text)
            if real is None:  # no allowed edit moves a marker; refuse rather than guess
                results = [_refused(r) if r.op.path == path else r for r in results]
                continue
            text = real
        if text != files.get(path):
            texts[path] = text
    return EditBatch(texts, results)


def _refused(result: EditResult) -> EditResult:
    if result.outcome is not Outcome.APPLIED:
        return result
    return EditResult(result.index, result.op, Outcome.FAILED, reason=REDACTED_REFUSAL)
