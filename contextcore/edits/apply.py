"""Apply a batch of edit ops to file texts: new texts and one result per op.

`apply_edits` takes the files as texts (path -> text; a missing path is an absent file)
and applies each op in order to the text the earlier ops left. An op applies only where
the matcher places it once (or everywhere with `replace_all`); otherwise it fails and
changes nothing. An op whose file changed since the model read it (its base sha256 differs)
is re-anchored: it applies if its old text still matches once in the current text, and is
a conflict if it matched the version the model saw but not the current one. BOM, line
endings and the final newline are kept. Non-goals: paths and the disk (`chat/repo`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from contextcore.edits.matcher import PASS_LABELS, PASSES, Found, find
from contextcore.edits.ops import EditOp, EditResult, Outcome, text_sha256
from contextcore.edits.report import closest_lines, similar_paths
from contextcore.edits.textshape import (
    BOM,
    elided_by_words,
    elided_line,
    shape_of,
    with_eol,
)


@dataclass(frozen=True)
class EditBatch:
    texts: dict[str, str | None]  # every changed path's new text (None: deleted)
    results: list[EditResult]

    @property
    def all_ok(self) -> bool:
        return all(r.ok for r in self.results)


def apply_edits(
    ops: Sequence[EditOp],
    files: Mapping[str, str | None],
    *,
    seen: Mapping[str, str] | None = None,
    passes: Collection[str] = PASSES,
) -> EditBatch:
    """Apply `ops` to `files`; `seen` holds the texts the model read, where known."""
    current: dict[str, str | None] = dict(files)
    seen = seen or {}
    results = []
    for index, op in enumerate(ops):
        stale = _stale(op, files.get(op.path), seen.get(op.path))
        paths = [p for p, t in current.items() if t is not None]
        context = _Context(index, op, stale, seen.get(op.path), passes, paths)
        result, text = _apply_one(context, current.get(op.path))
        if result.outcome is Outcome.APPLIED:
            current[op.path] = text
        results.append(result)
    changed = {path: text for path, text in current.items() if text != files.get(path)}
    return EditBatch(changed, results)


def _stale(op: EditOp, original: str | None, seen: str | None) -> bool:
    """Whether the file changed since the model read it: its hash is not the op's base, or
    its text is not the text the model saw."""
    if op.base_sha256 is not None:
        return op.base_sha256 != (text_sha256(original) if original is not None else None)
    return seen is not None and seen != original


@dataclass(frozen=True)
class _Context:
    index: int
    op: EditOp
    stale: bool
    seen: str | None
    passes: Collection[str]
    paths: list[str]

    def result(self, outcome: Outcome, **fields) -> EditResult:
        return EditResult(self.index, self.op, outcome, **fields)

    def failed(self, reason: str, **fields) -> tuple[EditResult, None]:
        return self.result(Outcome.FAILED, reason=reason, **fields), None


def _apply_one(ctx: _Context, text: str | None) -> tuple[EditResult, str | None]:
    op = ctx.op
    if op.kind == "delete":
        return _delete(ctx, text)
    if op.kind == "create":
        return _create(ctx, text)
    if text is None:
        near = similar_paths(op.path, ctx.paths)
        hint = f" Did you mean {', '.join(near)}?" if near else ""
        return ctx.failed(f"{op.path} does not exist.{hint}")
    words = elided_by_words(op.new_text, op.old_text)
    if words:
        return ctx.failed(
            f"the new text holds {words!r} in place of real lines, which would delete them; "
            "give the complete replacement text."
        )
    return _replace(ctx, text)


def _delete(ctx: _Context, text: str | None) -> tuple[EditResult, str | None]:
    if text is None:
        return ctx.result(Outcome.ALREADY_APPLIED), None
    if ctx.stale:
        reason = f"{ctx.op.path} changed since the model read it; deleting it would lose that."
        return ctx.result(Outcome.CONFLICT, reason=reason), text
    removed = len(text.splitlines())
    return ctx.result(Outcome.APPLIED, pass_name="delete", removed=removed), None


def _create(ctx: _Context, text: str | None) -> tuple[EditResult, str | None]:
    op, content = ctx.op, ctx.op.new_text
    if text is None:
        added = len(content.splitlines())
        return ctx.result(Outcome.APPLIED, pass_name="create", added=added, line=1), content
    shape = shape_of(text)
    content = with_eol(content.removeprefix(BOM), shape.eol)
    if content.endswith(shape.eol) != shape.final_newline and content:
        content = content + shape.eol if shape.final_newline else content.removesuffix(shape.eol)
    content = (BOM if shape.bom else "") + content
    if content == text:
        return ctx.result(Outcome.ALREADY_APPLIED), text
    if not op.overwrite and text.strip(BOM + " \t\r\n"):
        return ctx.failed(
            f"{op.path} already exists; an empty SEARCH part only creates a new file. "
            "Quote the lines to replace, or write the whole file with write_file."
        )
    if ctx.stale:
        reason = f"{op.path} changed since the model read it; writing it whole would lose that."
        return ctx.result(Outcome.CONFLICT, reason=reason), text
    added, removed = _counts(text, content)
    result = ctx.result(Outcome.APPLIED, pass_name="create", added=added, removed=removed, line=1)
    return result, content


def _replace(ctx: _Context, text: str) -> tuple[EditResult, str | None]:
    op = ctx.op
    bom = BOM if text.startswith(BOM) else ""
    body = text[len(bom) :]
    old, new = op.old_text.removeprefix(BOM), op.new_text.removeprefix(BOM)
    found = find(body, old, new, ctx.passes)
    if found and len(found.lines) == 1 and _holds_new_text(body, found, old):
        return ctx.result(Outcome.ALREADY_APPLIED), text
    if found and (len(found.lines) == 1 or op.replace_all):
        new_body, added, removed = _splice(body, found)
        result = ctx.result(
            Outcome.APPLIED,
            pass_name=found.pass_name,
            added=added,
            removed=removed,
            line=found.lines[0],
            reanchored=ctx.stale,
        )
        return result, bom + new_body
    if found:
        return _ambiguous(ctx, found)
    if new.strip() and find(body, new, old, ctx.passes):
        return ctx.result(Outcome.ALREADY_APPLIED), text
    if ctx.stale and (ctx.seen is None or _matches_once(ctx.seen, old, ctx.passes)):
        reason = (
            f"{op.path} changed since the model read it, and the old text no longer matches "
            "in the current file; nothing was changed."
        )
        return ctx.result(Outcome.CONFLICT, reason=reason, closest=closest_lines(body, old)), text
    return ctx.failed(_not_found_reason(op), closest=closest_lines(body, old))


def _holds_new_text(body: str, found: Found, old: str) -> bool:
    """Whether the new text already stands where the old text matched, the old text being
    part of it (`import os` -> `import os\nimport sys`): applying again would repeat it."""
    if found.pass_name != "exact":
        return False
    splice = found.splices[0]
    at = splice.text.find(old)
    while at != -1:
        start = splice.start - at
        if start >= 0 and body.startswith(splice.text, start):
            return True
        at = splice.text.find(old, at + 1)
    return False


def _matches_once(text: str, old: str, passes: Collection[str]) -> bool:
    found = find(text.removeprefix(BOM), old, "", passes)
    return found is not None and len(found.lines) == 1


def _ambiguous(ctx: _Context, found: Found) -> tuple[EditResult, None]:
    shown = ", ".join(str(n) for n in found.lines[:12])
    more = f" and {len(found.lines) - 12} more" if len(found.lines) > 12 else ""
    how = "" if found.pass_name == "exact" else f" ({PASS_LABELS[found.pass_name]})"
    return ctx.failed(
        f"the old text matches {len(found.lines)} places{how}, at lines {shown}{more}; "
        "nothing was changed. Include more surrounding lines so it matches once, "
        "or set replace_all to change every one.",
        matches=found.lines,
    )


def _not_found_reason(op: EditOp) -> str:
    elided = elided_line(op.old_text)
    if elided:
        return (
            f"line {elided} of the old text stands for lines it does not quote ('...'); "
            "the old text must quote every line it replaces. Split the change into one "
            "edit per region, each quoting its lines exactly."
        )
    return (
        f"the old text was not found in {op.path}, neither exactly nor ignoring whitespace, "
        "line endings, indentation or quote and dash style. Read the file again and quote "
        "its current lines exactly."
    )


def _splice(body: str, found: Found) -> tuple[str, int, int]:
    """The new body and the lines added and removed (counted over the touched lines)."""
    parts, previous, added, removed = [], 0, 0, 0
    for splice in found.splices:
        parts += [body[previous : splice.start], splice.text]
        previous = splice.end
        first = body.rfind("\n", 0, splice.start) + 1
        last = body.find("\n", splice.end)
        last = len(body) if last == -1 else last
        before = body[first:last]
        after = body[first : splice.start] + splice.text + body[splice.end : last]
        plus, minus = _counts(before, after)
        added, removed = added + plus, removed + minus
    parts.append(body[previous:])
    return "".join(parts), added, removed


def _counts(before: str, after: str) -> tuple[int, int]:
    old, new = before.splitlines(), after.splitlines()
    added = removed = 0
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag != "equal":
            removed, added = removed + i2 - i1, added + j2 - j1
    return added, removed
