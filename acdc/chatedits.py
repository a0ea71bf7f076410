"""`acdc chat`'s edits: the reply's proposed edits as unified diffs, applied with --apply.

With `--apply` the turn runs with `APPLY_NOW` set, so every edit of the reply (tool calls
and SEARCH/REPLACE blocks) goes through the same matcher and repository boundary as in the
page and is applied as it comes; what is still pending after the reply is applied then.
Without it the edits stay pending for the page. Either way each changed file is printed as
a unified diff, in colour only on a terminal, and a line for every edit that did not apply.
The exit status is 0 when every proposed edit applied (or none was proposed), else 1.
`--commit MESSAGE` then commits exactly the files acdc changed in the session (only after
a turn whose edits all applied). Non-goals: the review page, undo from the terminal.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import groupby

from channels.db import database_sync_to_async

from chat.repo import edittools, sessionsets
from chat.repo.edits.applying import APPLY_NOW, accept, preview
from chat.repo.edits.commit import CommitRefused, commit
from contextcore.edits import unified_diff
from history.models import PendingEdit, Session

Status = PendingEdit.Status
_COLOURS = {"+": "\033[32m", "-": "\033[31m", "@": "\033[36m"}
_BOLD, _RESET = "\033[1m", "\033[0m"


@dataclass
class TurnEdits:
    diffs: list[str] = field(default_factory=list)  # unified diff text per file
    notes: list[str] = field(default_factory=list)  # one line per edit not applied
    all_applied: bool = True


@contextmanager
def applying(apply: bool) -> Iterator[None]:
    """Around the turn: with --apply, edits apply as they come (this context only)."""
    token = APPLY_NOW.set(apply)
    try:
        yield
    finally:
        APPLY_NOW.reset(token)


def turn_edits(session_id: str, turn_id: str, *, apply: bool) -> TurnEdits:
    """What became of the turn's proposed edits, applying the pending ones with --apply."""
    session = Session.objects.get(pk=session_id)
    repo = sessionsets.repository()
    rows = _rows(session_id, turn_id)
    pending = [row.pk for row in rows if row.status == Status.PENDING]
    if apply and pending:
        accept(session, pending, repo=repo)
        rows = _rows(session_id, turn_id)
    found = TurnEdits(all_applied=all(row.status == Status.APPLIED for row in rows))
    applied = [row for row in rows if row.status == Status.APPLIED and row.version_after]
    for path, group in groupby(sorted(applied, key=lambda r: (r.path, r.pk)), lambda r: r.path):
        mine = list(group)
        before = mine[0].version_before.content if mine[0].version_before else None
        found.diffs.append(unified_diff(path, before, mine[-1].version_after.content))
    waiting = [row for row in rows if row.status == Status.PENDING]
    if waiting:
        for path, before, after in preview(session, waiting, repo=repo):
            found.diffs.append(unified_diff(path, before, after))
    found.notes = [row.result for row in rows if row.status != Status.APPLIED]
    return found


def _rows(session_id: str, turn_id: str) -> list[PendingEdit]:
    mine = PendingEdit.objects.filter(session_id=session_id, turn_id=turn_id)
    return list(mine.select_related("version_before", "version_after").order_by("id"))


def coloured(diff: str, colour: bool) -> str:
    """A unified diff with its headers bold and its lines coloured, when `colour`."""
    if not colour:
        return diff
    lines = []
    for line in diff.splitlines():
        if line.startswith(("--- ", "+++ ")):
            lines.append(f"{_BOLD}{line}{_RESET}")
        elif line[:1] in _COLOURS:
            lines.append(f"{_COLOURS[line[:1]]}{line}{_RESET}")
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


async def show(session_id: str, turn_id: str, *, apply: bool) -> int:
    """Print the turn's edits (diffs on stdout, what did not apply on stderr); the exit
    status: 0 when every proposed edit applied or none was proposed. Edits off: 0."""
    if not edittools.enabled():
        return 0
    found = await database_sync_to_async(turn_edits)(session_id, turn_id, apply=apply)
    colour = sys.stdout.isatty()
    for diff in found.diffs:
        sys.stdout.write(coloured(diff, colour))
    for note in found.notes:
        print(f"acdc: {note}", file=sys.stderr)
    return 0 if found.all_applied else 1


def commit_files(session_id: str, message: str) -> int:
    """`--commit`: git-commit the files acdc changed in the session; 0 when committed."""
    if not edittools.enabled():
        print("acdc: --commit needs edits on (ACDC_EDITS=1)", file=sys.stderr)
        return 1
    session = Session.objects.get(pk=session_id)
    try:
        done = commit(session, message, repo=sessionsets.repository())
    except CommitRefused as exc:
        print(f"acdc: not committed: {exc}", file=sys.stderr)
        return 1
    print(f"acdc: committed {', '.join(done.paths)}: {done.summary}", file=sys.stderr)
    return 0
