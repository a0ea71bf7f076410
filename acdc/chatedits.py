"""`acdc chat`'s edits: the reply's proposed edits as unified diffs, applied with --apply.

With `--apply` the turn runs with `apply_now`, so the reply's edits (tool calls and
SEARCH/REPLACE blocks) go through the same matcher and repository boundary as in the page
and apply together when the reply ends, or not at all (a failing edit, a protected file:
the reason is printed). Without it the edits stay pending for the page. Either way each
changed file is printed as a unified diff (its control characters removed), in colour only
on a terminal, and a line for every edit that did not apply.
The exit status is 0 when every proposed edit applied (or none was proposed), else 1; a
write that failed (a full disk) is one line, never a traceback. `--commit MESSAGE` then
commits exactly the files acdc changed in the session (only after a turn whose edits all
applied); a hook the session's edits changed runs only on the person's word
(`acdc.terminal.consent`). The server's endpoint uses the same functions. `Terminal` is the
terminal's side of a turn's end (`chat.turn.afterreply`): compaction's lines, the diffs,
the check's line and its output, each printed where that step of the turn's end is.
Non-goals: the review page, undo from the terminal.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from itertools import groupby
from types import MappingProxyType

from channels.db import database_sync_to_async

from acdc.terminal import consent
from chat.live.served import served
from chat.repo import edittools
from chat.repo.edits.applying import accept_reply, preview
from chat.repo.edits.commit import CommitRefused, Hooks, HooksNeedConsent, commit
from chat.turn.checking import CheckRun
from chat.turn.events import CompactionStarted, SessionEvent
from contextcore.controls import printable
from contextcore.edits import unified_diff
from history.models import PendingEdit, Session

Status = PendingEdit.Status
_DONE = (Status.APPLIED, Status.RETRIED)  # a retried failure gave way to the model's new edit
_COLOURS = MappingProxyType({"+": "\033[32m", "-": "\033[31m", "@": "\033[36m"})
_BOLD, _RESET = "\033[1m", "\033[0m"


@dataclass
class TurnEdits:
    diffs: list[str] = field(default_factory=list)  # unified diff text per file
    notes: list[str] = field(default_factory=list)  # one line per edit not applied
    all_applied: bool = True


def turn_edits(session_id: str, turn_id: str, *, apply: bool) -> TurnEdits:
    """What became of the turn's proposed edits, applying the pending ones with --apply."""
    session = Session.objects.get(pk=session_id)
    repo = served().repository.indexed()
    rows = _rows(session_id, turn_id)
    pending = [row for row in rows if row.status == Status.PENDING]
    found = TurnEdits(all_applied=all(row.status in _DONE for row in rows))
    if apply and pending and pending[0].message is not None:
        # The reply's end applied what could apply whole; asking again says why not.
        outcome = accept_reply(session, pending[0].message, repo=repo, auto=True)
        rows = _rows(session_id, turn_id)
        found.all_applied = all(row.status in _DONE for row in rows)
        if outcome.notice:
            found.notes.append(outcome.notice)
    applied = [row for row in rows if row.status == Status.APPLIED and row.version_after]
    for path, group in groupby(sorted(applied, key=lambda r: (r.path, r.pk)), lambda r: r.path):
        mine = list(group)
        before = mine[0].version_before.content if mine[0].version_before else None
        found.diffs.append(unified_diff(path, before, mine[-1].version_after.content))
    waiting = [row for row in rows if row.status == Status.PENDING]
    if waiting:
        for path, before, after in preview(session, waiting, repo=repo):
            found.diffs.append(unified_diff(path, before, after))
    found.notes += [row.result for row in rows if row.status not in _DONE]
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
    try:
        found = await database_sync_to_async(turn_edits)(session_id, turn_id, apply=apply)
    except OSError as exc:  # the apply code says why in a notice; this is what it did not
        print(f"acdc: error: {write_failure(exc)}", file=sys.stderr)
        return 1
    colour = sys.stdout.isatty()
    for diff in found.diffs:  # the model's text: none of its controls, only acdc's colours
        sys.stdout.write(coloured(printable(diff, colours=False), colour))
    for note in found.notes:
        print(f"acdc: {printable(note)}", file=sys.stderr)
    return 0 if found.all_applied else 1


class Terminal:
    """A turn's end on this terminal: notes and the check on stderr, diffs on stdout; the
    exit status of the turn's edits in `status` (as `show` gives it)."""

    def __init__(self, *, apply: bool) -> None:
        self.apply, self.status = apply, 0

    async def report(self, event: SessionEvent) -> None:
        if isinstance(event, CompactionStarted):
            print("acdc: compacting the history…", file=sys.stderr)
        elif event.text:
            print(f"acdc: {event.text}", file=sys.stderr)

    async def edits(self, session_id: str, turn_id: str) -> int:
        self.status = await show(session_id, turn_id, apply=self.apply)
        return self.status

    async def checked(self, session_id: str, ran: CheckRun) -> None:
        print(f"acdc: {ran.line()}", file=sys.stderr)
        if not ran.passed and ran.output:
            print(printable(ran.printed).rstrip("\n"), file=sys.stderr)


@dataclass
class CommitAnswer:
    """What `--commit` came to: the exit status, a line for the person, and the hooks that
    wait for the person's word (then nothing was committed)."""

    status: int
    line: str = ""
    hooks: list[str] = field(default_factory=list)


def write_failure(exc: OSError) -> str:
    """One line for an OS error met while applying (a full disk, a read-only folder)."""
    where = f" ({exc.filename})" if exc.filename else ""
    return f"the edits could not be written: {exc.strerror or exc}{where}"


def commit_answer(session_id: str, message: str, hooks: Hooks = "ask") -> CommitAnswer:
    """`--commit`: git-commit the files acdc changed in the session (in this process or
    the server's); `hooks` says what to do with a hook the session's edits changed."""
    if not edittools.enabled():
        return CommitAnswer(1, "--commit needs edits on (ACDC_EDITS=1)")
    session = Session.objects.get(pk=session_id)
    try:
        done = commit(session, message, repo=served().repository.indexed(), hooks=hooks)
    except HooksNeedConsent as exc:
        return CommitAnswer(1, consent.refusal(exc.hooks), exc.hooks)
    except CommitRefused as exc:
        return CommitAnswer(1, f"not committed: {exc}")
    skipped = " (no hook ran)" if hooks == "skip" else ""
    return CommitAnswer(0, f"committed {', '.join(done.paths)}{skipped}: {done.summary}")


def commit_files(session_id: str, message: str, hooks: Hooks = "ask") -> int:
    """`--commit` in this process: a terminal is asked about a changed hook."""
    answer = commit_answer(session_id, message, hooks)
    if answer.hooks and consent.may_ask() and consent.ask(answer.hooks):
        answer = commit_answer(session_id, message, "run")
    print(f"acdc: {answer.line}", file=sys.stderr)
    return answer.status
