"""What a set of edits would do to the files now: judged paths, then the matcher's verdict.

`check` takes every op's path through the repository boundary (`disk.target`) and refuses
new content acdc could not read back (too large, not text) before anything is stored;
`match` runs `contextcore.edits.apply_edits` over the files as they are on disk, after the
turn's `earlier` pending edits (a reply's second edit of a file meets the text its first
would leave), on the text the model was shown (credential-shaped spans as their markers:
an edit cannot find out what is behind one), and returns one result per op and the new
texts. `SetOutcome` is what became of a set, for the model, the page and the terminal;
`tell_model` records a decision's lines as an active `edit_review` tool output, so the
next request carries each result once (the new content comes as the changed file's diff).
Nothing is written to the work tree here. Non-goals: rows, the disk writes.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from chat.repo import credentials, indexing
from chat.repo.edits import disk
from chat.repo.edits.versions import file_version, seen_texts
from contextcore.edits import EditOp, EditResult, Outcome, apply_edits
from history.models import Session


@dataclass
class SetOutcome:
    """What became of one set of edits: a line per edit, the report for the model when
    some failed, the files written, and `notice`: one line for the person when nothing
    was written although they asked (why, and what to do)."""

    lines: list[str] = field(default_factory=list)
    report: str = ""
    diffs: list[tuple[str, str | None, str | None]] = field(default_factory=list)
    applied: bool = False  # every edit of the set applied (or was already there)
    notice: str = ""
    taken: bool = False  # another tab or worker had claimed the rows first

    def text(self) -> str:
        return "\n".join([*self.lines, *([self.report] if self.report else [])])


@dataclass(frozen=True)
class Checked:
    ops: list[EditOp]  # with paths as the repository names them
    targets: dict[str, disk.Target]
    refused: dict[int, str]  # op index -> why its path or content may not be edited

    def fine(self) -> list[EditOp]:
        return [op for i, op in enumerate(self.ops) if i not in self.refused]


def check(repo: indexing.Repository, ops: Sequence[EditOp]) -> Checked:
    checked, targets, refused = [], {}, {}
    for index, op in enumerate(ops):
        try:
            found = disk.target(repo, op.path)
            if op.kind != "delete":
                disk.check_new_text(repo, found.key, op.new_text)
        except disk.EditRefused as exc:
            refused[index] = str(exc)
            checked.append(op)
            continue
        targets[found.key] = found
        checked.append(replace(op, path=found.key))
    return Checked(checked, targets, refused)


def with_base(repo: indexing.Repository, session: Session, op: EditOp) -> EditOp:
    """The op names the version the model last saw through acdc, when it named none."""
    if op.base_sha256 is not None:
        return op
    version = file_version(repo, op.path, session)
    return replace(op, base_sha256=version.file_hash) if version and version.file_hash else op


def match(
    repo: indexing.Repository,
    session: Session,
    checked: Checked,
    earlier: Sequence[EditOp] = (),
) -> tuple[list[EditResult], dict[str, str | None]]:
    """Every op's result against the disk (after `earlier`), and the new texts; refused
    paths fail without being matched."""
    earlier = [op for op in earlier if op.path in checked.targets]
    files = {key: t.text for key, t in checked.targets.items()}
    seen = seen_texts(repo, [*earlier, *checked.ops], session)
    batch = apply_edits([*earlier, *checked.fine()], files, seen=seen, hide=credentials.spans)
    matched = iter(batch.results[len(earlier) :])
    results = []
    for index, op in enumerate(checked.ops):
        if index in checked.refused:
            reason = checked.refused[index]
            results.append(EditResult(index, op, Outcome.FAILED, reason=reason))
        else:
            results.append(replace(next(matched), index=index))
    return results, batch.texts


REVIEW_TOOL = "edit_review"


def tell_model(session: Session, lines: Sequence[str]) -> None:
    """What became of edits after the reply (accepted, rejected, undone, written by
    Auto-apply), for the model's next request."""
    if not lines:
        return
    with contextlib.suppress(indexing.IndexingError):
        indexing.record_toolcall(
            session=session,
            call_id=f"review-{uuid.uuid4().hex[:12]}",
            tool=REVIEW_TOOL,
            args={},
            status="ok",
            output=credentials.tool_output("\n".join(lines)),
            args_display=f"{REVIEW_TOOL}({len(lines)} edit{'s' if len(lines) != 1 else ''})",
        )
