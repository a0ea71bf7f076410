"""Check after applying: the session's check command, run once a reply's edits are written.

The session's "Check after applying edits" setting (`Session.check_command`, the name of a
declared command) or `acdc chat --apply --check NAME` for one chat names the command.
Once a turn's edits have applied (Auto-apply, `--apply`, or Accept all, which marks the
check due for a turn host to claim once: `request_after_accept`, `claim_due`),
`after_apply` runs it through the
command runner (sandboxed, time-limited, its output capped and redacted, as the model's
`run_command`), and stores it like any tool run: a `CommandRun` row, a toolcall object
(`tool=check`) and a tool message with its own turn id. That message stands alone after
the reply: it is not one of the reply's tool calls (the model did not make it), so the
reply's entry in the history, sent and cached already or about to be, never changes.
The toolcall stays in the pool (its metadata line says the check passed or failed) but out
of the active set: on failure its cut output reaches the model once, in the one fix round.

That round is a new turn of the session whose message is `CheckRun.fix_request` (acdc's
words, with the cut output): appended after the reply, never rewriting an earlier message,
so the cached prefix holds and the history says truthfully who asked for what. Its edits
wait for review as usual, or apply at once under Auto-apply or `--apply`; the check runs
again after them, and is never sent back a second time: a turn whose message came right
after a failed check is a fix round (`answers_failed_check`), and `acdc chat` counts its own.
Non-goals: which turns run (the turn host, the terminal endpoint), cards in the page.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, replace

from channels.db import database_sync_to_async

from chat.repo import edittools, indexing, sessionsets
from chat.repo.commands import declaring
from chat.repo.commands.model_tools import output_budget, store_run
from chat.repo.commands.output import model_copy
from chat.repo.commands.runner import CommandRuns, RunOutcome
from chat.repo.tools.calls import ToolResult, record
from history import services
from history.ids import new_turn_id
from history.models import Message, PendingEdit, Session

log = logging.getLogger(__name__)
TOOL = "check"
FIX_REQUEST = (
    "acdc ran the check `{name}` (`{command}`) after your edits were applied, and it "
    "failed: {summary}. Its output:\n\n{fence}\n{output}\n{fence}\n\n"
    "Fix what it reports, with edits. This is the one automatic round: acdc runs the check "
    "again once your edits are applied, and does not send it back again."
)
_UNDONE = (PendingEdit.Status.PENDING, PendingEdit.Status.FAILED, PendingEdit.Status.CONFLICT)


class CheckRefused(ValueError):
    """The check cannot run here; the text says why and what to do."""


@dataclass(frozen=True)
class CheckRun:
    """One run of the check, as stored and as a terminal prints it."""

    name: str
    command: str  # the argv as one line
    passed: bool
    summary: str  # "exit status 1 after 0.3 s", "killed at its timeout …"
    output: str  # what the model reads: plain, its failure summary first, within the budget
    exit_code: int | None = None
    duration: float = 0.0
    object_id: str = ""
    fix_round: bool = False  # the checked turn answered a failed check: never sent back
    shown: str = ""  # the same lines with their colours, for a terminal and the card

    @property
    def printed(self) -> str:
        """The output as a terminal prints it (its colours, when it had any)."""
        return self.shown or self.output

    @property
    def sends_back(self) -> bool:
        return not self.passed and not self.fix_round

    def line(self) -> str:
        return f"check {self.name}: {'passed' if self.passed else 'failed'}, {self.summary}"

    def fix_request(self) -> str:
        """The fix round's message: what failed and its cut output, from acdc."""
        longest = max((len(run) for run in re.findall(r"`+", self.output)), default=0)
        fence = "`" * max(3, longest + 1)
        return FIX_REQUEST.format(
            name=self.name,
            command=self.command,
            summary=self.summary,
            fence=fence,
            output=self.output.rstrip("\n"),
        )


def refusal(repository: str, name: str, runs: CommandRuns) -> str:
    """Why `name` cannot run as a check here ("" when it can): not declared, or no sandbox
    (where every run would wait for the person's approval). Synchronous ORM code."""
    if not edittools.enabled():
        return f"--check {name[:60]!r}: edits are off (ACDC_EDITS=0), so nothing is applied"
    if declaring.find(repository, name) is None:
        return (
            f"--check {name[:60]!r}: there is no declared command of that name; "
            f"{declaring.known(repository)}"
        )
    if runs.needs_approval:
        return (
            f"--check {name!r}: {runs.sandbox.reason}, so every command needs the person's "
            "approval and none runs by itself (install bubblewrap)"
        )
    return ""


def set_check(session: Session, name: str) -> None:
    """The session's setting: a declared command's name, or "" for off."""
    name = (name or "").strip()
    if name and declaring.find(session.repository, name) is None:
        raise CheckRefused(
            f"there is no declared command {name[:60]!r}; {declaring.known(session.repository)}"
        )
    session.check_command = name
    session.save(update_fields=["check_command"])


def request_after_accept(message: Message) -> bool:
    """Accept all wrote `message`'s edits: its check is due when the session has one (the
    turn host claims it, once across tabs and workers: `claim_due`)."""
    updated = Session.objects.filter(pk=message.session_id).exclude(check_command="")
    return bool(message.turn_id) and bool(updated.update(check_due=message.turn_id))


def claim_due(session_id: str) -> str:
    """The turn whose check Accept all asked for, taken by one caller only ("" if none)."""
    turn_id = Session.objects.filter(pk=session_id).values_list("check_due", flat=True).first()
    if not turn_id:
        return ""
    taken = Session.objects.filter(pk=session_id, check_due=turn_id).update(check_due="")
    return turn_id if taken else ""


def answers_failed_check(session_id: str, turn_id: str) -> bool:
    """Whether the turn's message came right after a failed check: the fix round (or a
    person's answer to it), whose own check is shown and never sent back again."""
    messages = Message.objects.filter(session_id=session_id, system_event=False)
    user = messages.filter(turn_id=turn_id, role=Message.Role.USER).order_by("seq").first()
    if user is None:
        return False
    before = messages.filter(seq__lt=user.seq).order_by("-seq").first()
    details = (before.edit_results or [{}])[0] if before is not None else {}
    return (
        before is not None
        and before.role == Message.Role.TOOL
        and details.get("tool") == TOOL
        and details.get("status") == "fail"
    )


def _due(session_id: str, turn_id: str, asked: str) -> tuple[Session, str] | None:
    """The session and the check to run after the turn, or None. The session's check runs
    once the turn's edits applied; one asked for (`--check`) also after a turn that
    proposed none, and never while an edit of the turn is left unapplied."""
    sessions = Session.objects.filter(pk=session_id)
    # Most sessions declare no check: learn that from the one column, not the whole row
    # and its context header (a one-line turn's fixed cost, issue 42 item 13).
    if not asked and not sessions.values_list("check_command", flat=True).first():
        return None
    session = sessions.first()
    name = asked or (session.check_command if session is not None else "")
    if session is None or not name:
        return None
    rows = PendingEdit.objects.filter(session_id=session_id, turn_id=turn_id)
    if rows.filter(status__in=_UNDONE).exists():
        return None
    if not asked and not rows.filter(status=PendingEdit.Status.APPLIED).exists():
        return None
    return session, name


async def after_apply(
    session_id: str,
    turn_id: str,
    *,
    runs: CommandRuns,
    repo: indexing.Repository,
    asked: str = "",
) -> CheckRun | None:
    """The check run after the turn's edits applied (None when none was due). A check that
    cannot run is logged and is None: the reply and its edits stand."""
    due = await database_sync_to_async(_due)(session_id, turn_id, asked)
    if due is None:
        return None
    session, name = due
    try:
        ran = await run_check(session, name, runs=runs, repo=repo)
    except CheckRefused as exc:
        log.warning("session %s: the check after applying did not run: %s", session_id, exc)
        return None
    fix_round = await database_sync_to_async(answers_failed_check)(session_id, turn_id)
    return replace(ran, fix_round=fix_round)


async def run_check(
    session: Session, name: str, *, runs: CommandRuns, repo: indexing.Repository
) -> CheckRun:
    """Run the declared command `name` as the check, in `repo` (whose path keys the
    declarations), and store the run; the caller's task owns it (cancelling it kills the
    command's processes)."""
    root = repo.root
    reason = await database_sync_to_async(refusal)(str(root), name, runs)
    if reason:
        raise CheckRefused(reason)
    command = await database_sync_to_async(declaring.find)(str(root), name)
    assert command is not None
    outcome = await runs.run_declared(session, command, root)
    copy = model_copy(outcome.captured, output_budget())
    run = CheckRun(
        name=name,
        command=command.shown,
        passed=outcome.passed,
        summary=outcome.summary(command.timeout_seconds),
        output=copy.plain,
        shown=copy.shown if copy.shown != copy.plain else "",
        exit_code=outcome.exit_code,
        duration=outcome.duration,
    )
    object_id = await database_sync_to_async(_store)(session, run, outcome, repo)
    return replace(run, object_id=object_id)


def _store(session: Session, run: CheckRun, outcome: RunOutcome, repo: indexing.Repository) -> str:
    """The run as a `CommandRun`, a toolcall object out of the active set, and a tool
    message of its own turn; returns the toolcall's id."""
    turn_id = new_turn_id()
    store_run(session, turn_id, run.name, outcome)
    text = f"$ {run.command}\n{run.summary}\n{run.output}"
    status = "ok" if run.passed else "fail"
    result = ToolResult(f"check-{turn_id}", TOOL, status, text, args_display=f"check({run.name})")
    record(session, result, tool=TOOL, args={"name": run.name})
    sessionsets.deactivate(session, result.object_id, repo=repo)  # it goes in the fix request
    details = {"tool": TOOL, "args": result.args_display, "status": status}
    details |= {"object_id": result.object_id, "call_id": result.call_id, "at": 0}
    if run.shown:  # the card draws the colours the model is not sent
        details["shown"] = f"$ {run.command}\n{run.summary}\n{run.shown}"
    services.message_append(
        session=session,
        role=Message.Role.TOOL,
        content=text,
        turn_id=turn_id,
        edit_results=[details],
    )
    return result.object_id
