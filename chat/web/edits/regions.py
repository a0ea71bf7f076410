"""Where an edit that did not apply meets the file: hunks with the file's real line numbers.

A conflict is an edit that applies to the version the model read but not to the file as it
is now: `conflict_view` shows the edit's change against that version and what changed on
disk since in the same lines, both as hunks whose headers name real lines. A failure (the
old text is not in the file) shows the model's change and the file's closest lines with
their numbers, found by the matcher's report. `placed` puts edits in a version of the
file (a rejected card's change, in the lines it had while pending). Nothing is decided or
written here.
Non-goals: the card's layout (`cards`), matching (`contextcore.edits`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from chat.repo import indexing
from chat.repo.edits.versions import seen_texts
from contextcore.edits import EditOp, apply_edits, diff_hunks, text_sha256
from contextcore.edits.diff import Hunk
from contextcore.edits.report import closest_lines
from history import edits as rows_
from history.models import PendingEdit, Session

NEAR_LINES = 3  # a change on disk this close to the edit's lines is shown beside it


@dataclass
class Region:
    """What the card shows of one edit that did not apply."""

    proposed: list[Hunk] = field(default_factory=list)  # the model's change
    on_disk: list[Hunk] = field(default_factory=list)  # what changed since it read the file
    closest: str = ""  # the file's closest lines, numbered (a failure)
    located: bool = False  # `proposed` names real lines of the version the model read


def region_of(
    row: PendingEdit, now: str | None, session: Session, repo: indexing.Repository
) -> Region:
    op = rows_.op_of(row)
    seen = seen_texts(repo, [op], session).get(op.path) if op.base_sha256 else None
    if seen is not None and seen != now:
        placed = _placed(op, seen)
        if placed is not None:
            proposed = diff_hunks(seen, placed)
            changed = diff_hunks(seen, now)
            return Region(proposed, _near(changed, proposed), located=True)
    if now is not None and op.kind == "replace":
        placed = _placed(op, now)
        if placed is not None:
            return Region(diff_hunks(now, placed), located=True)
        return Region(_relative(op), closest=closest_lines(now, op.old_text))
    return Region(_relative(op))


def _placed(op: EditOp, text: str) -> str | None:
    """`text` with the edit applied, or None when it does not apply there."""
    return placed([op], text)


def placed(ops: list[EditOp], text: str) -> str | None:
    """`text` (the file of all `ops`) with every op applied, or None unless all apply."""
    current = [replace(op, base_sha256=text_sha256(text)) for op in ops]
    batch = apply_edits(current, {ops[0].path: text})
    if not all(result.ok for result in batch.results):
        return None
    return batch.texts.get(ops[0].path, text)


def _relative(op: EditOp) -> list[Hunk]:
    """The model's own old and new text, for an edit with no place in the file."""
    if op.kind == "delete":
        return []
    old = op.old_text if op.kind == "replace" else None
    return diff_hunks(old, op.new_text)


def _near(changed: list[Hunk], proposed: list[Hunk]) -> list[Hunk]:
    """The hunks of `changed` that touch the old lines `proposed` touches, give or take."""
    spans = [(h.old_start - NEAR_LINES, h.old_start + h.old_count + NEAR_LINES) for h in proposed]
    return [
        hunk
        for hunk in changed
        if any(
            hunk.old_start <= end and start <= hunk.old_start + hunk.old_count
            for start, end in spans
        )
    ]
