"""One op on one text: where it goes, whether it is already there, and why not.

`apply_one` places a replace op with the matcher (one place, or every place with
`replace_all`; old text that leaves lines out with `...` piece by piece), creates or deletes
a file, and says why not otherwise, with the file's closest lines. An edit is "already
applied" only where its new text stands where its old text would have matched: around the
one match of its old text, or as the one place of its new text in a file that is not the
very text the model saw (that file never held the change). An op that reaches a redacted
value's marker gets `REDACTED_REFUSAL` and nothing else. Non-goals: staleness and merges
(`contextcore.edits.apply`), the disk.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from contextcore.edits.elision import find_elided, markers
from contextcore.edits.matcher import PASS_LABELS, Found, find, token_splits
from contextcore.edits.ops import EditOp, EditResult, Outcome
from contextcore.edits.report import closest_lines, similar_paths
from contextcore.edits.shown import REDACTED_REFUSAL, overlaps, touches
from contextcore.edits.textshape import BOM, elided_by_words, elided_line, shape_of, with_eol
from contextcore.paths import shown


@dataclass(frozen=True)
class Context:
    index: int
    op: EditOp
    passes: Collection[str]
    paths: list[str] = field(default_factory=list)  # the files that exist, for a wrong path
    stale: bool = False  # the file changed since the model read it; matched against it anyway
    seen: str | None = None  # the text the model saw, where known (for a conflict's verdict)
    unchanged: bool = False  # the text is exactly the one the model saw
    markers: frozenset[str] = frozenset()  # the redaction markers of this file

    def result(self, outcome: Outcome, **fields) -> EditResult:
        return EditResult(self.index, self.op, outcome, **fields)

    def failed(self, reason: str, **fields) -> Attempt:
        return Attempt(self.result(Outcome.FAILED, reason=reason, **fields), None)


@dataclass(frozen=True)
class Attempt:
    result: EditResult
    text: str | None  # the text after the op (the same text when nothing applied)
    missing: bool = False  # the old text is nowhere in the text: another version may hold it


def apply_one(ctx: Context, text: str | None) -> Attempt:
    op = ctx.op
    if op.kind == "delete":
        return _delete(ctx, text)
    if op.kind == "create":
        return _create(ctx, text)
    if text is None:
        near = similar_paths(op.path, ctx.paths)
        hint = f" Did you mean {', '.join(map(shown, near))}?" if near else ""
        return ctx.failed(f"{shown(op.path)} does not exist.{hint}")
    if touches(op.old_text, ctx.markers) or touches(op.new_text, ctx.markers):
        return ctx.failed(REDACTED_REFUSAL)
    words = "" if elided_line(op.old_text) else elided_by_words(op.new_text, op.old_text)
    if words:
        return ctx.failed(
            f"the new text holds {words!r} in place of real lines, which would delete them; "
            "give the complete replacement text."
        )
    return _replace(ctx, text)


def _delete(ctx: Context, text: str | None) -> Attempt:
    if text is None:
        return Attempt(ctx.result(Outcome.ALREADY_APPLIED), None)
    if ctx.stale:
        reason = (
            f"{shown(ctx.op.path)} changed since the model read it; deleting it would lose that."
        )
        return Attempt(ctx.result(Outcome.CONFLICT, reason=reason), text)
    removed = len(text.splitlines())
    return Attempt(ctx.result(Outcome.APPLIED, pass_name="delete", removed=removed), None)


def _create(ctx: Context, text: str | None) -> Attempt:
    op, content = ctx.op, ctx.op.new_text
    if text is None:
        added = len(content.splitlines())
        result = ctx.result(Outcome.APPLIED, pass_name="create", added=added, line=1)
        return Attempt(result, content)
    if ctx.markers and (touches(content, ctx.markers) or touches(text, ctx.markers)):
        return ctx.failed(REDACTED_REFUSAL)  # writing the file whole moves every value in it
    shape = shape_of(text)
    content = with_eol(content.removeprefix(BOM), shape.eol)
    if content.endswith(shape.eol) != shape.final_newline and content:
        content = content + shape.eol if shape.final_newline else content.removesuffix(shape.eol)
    content = (BOM if shape.bom else "") + content
    if content == text:
        return Attempt(ctx.result(Outcome.ALREADY_APPLIED), text)
    if not op.overwrite and text.strip(BOM + " \t\r\n"):
        return ctx.failed(
            f"{shown(op.path)} already exists; an empty SEARCH part only creates a new file. "
            "Quote the lines to replace, or write the whole file with write_file."
        )
    if ctx.stale:
        reason = (
            f"{shown(op.path)} changed since the model read it; writing it whole would lose that."
        )
        return Attempt(ctx.result(Outcome.CONFLICT, reason=reason), text)
    added, removed = counts(text, content)
    result = ctx.result(Outcome.APPLIED, pass_name="create", added=added, removed=removed, line=1)
    return Attempt(result, content)


def _replace(ctx: Context, text: str) -> Attempt:
    bom = BOM if text.startswith(BOM) else ""
    body = text[len(bom) :]
    old, new = ctx.op.old_text.removeprefix(BOM), ctx.op.new_text.removeprefix(BOM)
    found = find(body, old, new, ctx.passes)
    if found:
        words = elided_by_words(new, old)
        if words:  # the `...` lines are the file's own: the new text's comment deletes code
            return ctx.failed(
                f"the new text holds {words!r} in place of real lines, which would delete "
                "them; give the complete replacement text."
            )
        return _place(ctx, text, found)
    if markers(body, old, ctx.passes):
        return _elided(ctx, text, old, new)
    if _already_there(ctx, body, new, old):
        return Attempt(ctx.result(Outcome.ALREADY_APPLIED), text)
    return _not_found(ctx, body, old, new)


def _place(ctx: Context, text: str, found: Found) -> Attempt:
    bom = BOM if text.startswith(BOM) else ""
    body, old = text[len(bom) :], ctx.op.old_text.removeprefix(BOM)
    if overlaps(body, ctx.markers, found.spans):
        return ctx.failed(REDACTED_REFUSAL)
    if len(found.lines) == 1 and _holds_new_text(body, found, old):
        return Attempt(ctx.result(Outcome.ALREADY_APPLIED), text)
    if len(found.lines) > 1 and not ctx.op.replace_all:
        return _ambiguous(ctx, found)
    if ctx.stale:
        doubt = _doubtful_on_a_changed_file(body, found, old)
        if doubt:
            reason = (
                f"{shown(ctx.op.path)} changed since the model read it, and the old text "
                f"matches the current file only {doubt}: not enough to place an edit on a changed "
                "file; nothing was changed. Read the file again and quote its current lines."
            )
            result = ctx.result(Outcome.CONFLICT, reason=reason, closest=closest_lines(body, old))
            return Attempt(result, None)
    new_body, added, removed = splice(body, found)
    result = ctx.result(
        Outcome.APPLIED,
        pass_name=found.pass_name,
        added=added,
        removed=removed,
        line=found.lines[0],
        reanchored=ctx.stale,
    )
    return Attempt(result, bom + new_body)


def _doubtful_on_a_changed_file(body: str, found: Found, old: str) -> str:
    """Why a match cannot re-anchor an edit on a file that changed since the model read
    it (and whose read text is unknown): only a tolerant pass placed it, or the text also
    stands inside a longer word or a deeper line, where the model's place may have been."""
    if found.pass_name != "exact":
        return PASS_LABELS.get(found.pass_name, "piece by piece ('...')")
    splits = token_splits(body, old, words_only=False)
    if splits:
        return f"where it does not also stand inside longer text (line {_numbers(splits)})"
    return ""


def _elided(ctx: Context, text: str, old: str, new: str) -> Attempt:
    body = text.removeprefix(BOM)
    placed = find_elided(body, old, new, ctx.passes)
    if placed.found:
        return _place(ctx, text, placed.found)
    if placed.matches:
        return ctx.failed(placed.reason, matches=placed.matches)
    if not ctx.unchanged and new.strip():
        again = find_elided(body, new, old, ctx.passes).found
        if again and not overlaps(body, ctx.markers, again.spans):
            return Attempt(ctx.result(Outcome.ALREADY_APPLIED), text)
    closest = closest_lines(body, placed.missing) if placed.missing else ""
    result = ctx.result(Outcome.FAILED, reason=placed.reason, closest=closest)
    return Attempt(result, None, bool(placed.missing))


def _already_there(ctx: Context, body: str, new: str, old: str) -> bool:
    """The new text stands once where the old text would have matched, in a file that is
    not the text the model saw (where the old text was never found, nothing was applied)."""
    if ctx.unchanged or not new.strip():
        return False
    found = find(body, new, old, ctx.passes)
    return (
        found is not None and len(found.lines) == 1 and not overlaps(body, ctx.markers, found.spans)
    )


def _not_found(ctx: Context, body: str, old: str, new: str) -> Attempt:
    closest = closest_lines(body, old)
    splits = token_splits(body, old)
    split = (
        f" It stands at line{'s' if len(splits) > 1 else ''} {_numbers(splits)} only as part "
        "of a longer word or number, which is not a match; quote whole words."
        if splits
        else ""
    )
    if ctx.stale and (ctx.seen is None or _matches_once(ctx.seen, old, ctx.passes)):
        reason = (
            f"{shown(ctx.op.path)} changed since the model read it, and the old text no longer "
            f"matches in the current file; nothing was changed.{split}"
        )
        return Attempt(ctx.result(Outcome.CONFLICT, reason=reason, closest=closest), None)
    if splits:
        reason = f"the old text was not found in {shown(ctx.op.path)} as whole words.{split}"
        return ctx.failed(reason, closest=closest)
    reason = _not_found_reason(ctx.op)
    if ctx.unchanged and new.strip():
        there = find(body, new, old, ctx.passes)
        if there and len(there.lines) == 1 and not overlaps(body, ctx.markers, there.spans):
            reason += (
                f" (The new text stands at line {there.lines[0]}, but the file is the one "
                "that was read, where the old text never was: this edit did not put it there.)"
            )
    return Attempt(ctx.result(Outcome.FAILED, reason=reason, closest=closest), None, True)


def _holds_new_text(body: str, found: Found, old: str) -> bool:
    """Whether the new text already stands where the old text matched, the old text being
    part of it (`import os` -> `import os\nimport sys`): applying again would repeat it."""
    if found.pass_name != "exact":
        return False
    splice_ = found.splices[0]
    at = splice_.text.find(old)
    while at != -1:
        start = splice_.start - at
        if start >= 0 and body.startswith(splice_.text, start):
            return True
        at = splice_.text.find(old, at + 1)
    return False


def _matches_once(text: str, old: str, passes: Collection[str]) -> bool:
    found = find(text.removeprefix(BOM), old, "", passes)
    return found is not None and len(found.lines) == 1


def _ambiguous(ctx: Context, found: Found) -> Attempt:
    how = "" if found.pass_name == "exact" else f" ({PASS_LABELS[found.pass_name]})"
    return ctx.failed(
        f"the old text matches {len(found.lines)} places{how}, at lines "
        f"{_numbers(found.lines)}; nothing was changed. Include more surrounding lines so "
        "it matches once, or set replace_all to change every one.",
        matches=found.lines,
    )


def _numbers(numbers) -> str:
    shown = ", ".join(str(n) for n in list(numbers)[:12])
    return shown + (f" and {len(numbers) - 12} more" if len(numbers) > 12 else "")


def _not_found_reason(op: EditOp) -> str:
    return (
        f"the old text was not found in {shown(op.path)}, neither exactly nor ignoring whitespace, "
        "line endings, indentation or quote and dash style. Read the file again and quote "
        "its current lines exactly."
    )


def splice(body: str, found: Found) -> tuple[str, int, int]:
    """The new body and the lines added and removed (counted over the touched lines)."""
    parts, previous, added, removed = [], 0, 0, 0
    for one in found.splices:
        parts += [body[previous : one.start], one.text]
        previous = one.end
        first = body.rfind("\n", 0, one.start) + 1
        last = body.find("\n", one.end)
        last = len(body) if last == -1 else last
        before = body[first:last]
        after = body[first : one.start] + one.text + body[one.end : last]
        plus, minus = counts(before, after)
        added, removed = added + plus, removed + minus
    parts.append(body[previous:])
    return "".join(parts), added, removed


def counts(before: str, after: str) -> tuple[int, int]:
    old, new = before.splitlines(), after.splitlines()
    added = removed = 0
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag != "equal":
            removed, added = removed + i2 - i1, added + j2 - j1
    return added, removed
