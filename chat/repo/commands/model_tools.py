"""The model's command tools: `run_command(name)` and `propose_command(argv, reason)`.

The model chooses among the commands the person declared; it never gives an argv that
runs. `run_command` looks the name up in the repository's declarations (an unknown name
runs nothing and says which names exist), runs it through the caller's `CommandRuns`
(sandboxed, time-limited, one at a time per session), stores the run, and answers with its
exit status, duration and output, plain, cut to ACDC_COMMAND_OUTPUT_BYTES (its failure
summary first) and redacted; the card draws the same lines in their colours. Without
a sandbox on this machine it runs nothing: it records a proposal and answers that the
person must approve. `propose_command` records the exact argv and reason as a pending
proposal; nothing runs until the person approves it from the page's card
(`chat.repo.commands.answering`). In a turn a page serves (`waiting`), the call waits for
that answer and answers with the run's result or the denial; elsewhere (the terminal) it
answers "waiting for the person" at once. Both are offered to every model that calls
tools, so the tool definitions (and the cached prefix) do not change when a command is
declared.
Every call is recorded as a toolcall object. Async: the run must be cancellable.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from types import MappingProxyType

from channels.db import database_sync_to_async
from django.conf import settings
from pydantic import Field

from chat.repo.commands import declaring, proposal_state
from chat.repo.commands.output import Captured, model_copy
from chat.repo.commands.runner import CommandRuns, OnOutput, RunOutcome
from chat.repo.tools.calls import (
    Arguments,
    Text,
    ToolCall,
    ToolFailure,
    ToolResult,
    checked_arguments,
    display,
    function_spec,
    plain_reason,
    record,
    stored_call_id,
)
from history.models import CommandProposal, CommandRun, Session

log = logging.getLogger(__name__)
WAITING = "waiting for the person"
# Shows a proposal (the call's arguments as shown, the proposal's facts) to the person
# while the call waits for the answer.
Waiting = Callable[[str, dict], Awaitable[None]]


class RunCommandArguments(Arguments):
    name: Text = Field(description="the name of a command the developer declared")


class ProposeCommandArguments(Arguments):
    argv: list[Text] = Field(
        description="the program and its arguments, one item each (no shell unless needed)"
    )
    reason: Text = Field(description="why it should run, in one sentence for the developer")


_ARGUMENTS: Mapping[str, tuple[str, type[Arguments]]] = MappingProxyType(
    {
        "run_command": (
            "Run one of the commands the developer declared for this repository (its tests, "
            "linters, checks) by name, in a sandbox at the repository root. Answers with the "
            "exit status, the duration and the output (long output is cut to its failure "
            "summary, head and tail). An unknown name runs nothing and lists the declared names.",
            RunCommandArguments,
        ),
        "propose_command": (
            "Ask the developer to run a command that is not declared: the exact argv and why. "
            "Nothing runs until the developer approves it; the answer is that it waits.",
            ProposeCommandArguments,
        ),
    }
)
COMMAND_TOOL_SPECS = tuple(function_spec(n, text, args) for n, (text, args) in _ARGUMENTS.items())
COMMAND_TOOL_NAMES = tuple(_ARGUMENTS)


def handles(name: str) -> bool:
    return name in COMMAND_TOOL_NAMES


def with_command_tools(specs: list[dict]) -> list[dict]:
    return [*specs, *COMMAND_TOOL_SPECS]


def output_budget() -> int:
    return int(getattr(settings, "ACDC_COMMAND_OUTPUT_BYTES", 8192))


async def run_command_call(
    session: Session,
    call: ToolCall,
    runs: CommandRuns,
    *,
    turn_id: str = "",
    root: Path,
    on_output: OnOutput | None = None,
    waiting: Waiting | None = None,
) -> ToolResult:
    """Carry out one call of a command tool and record it; a bad call fails the call,
    never the turn. Cancellation kills the run and propagates. Declarations are keyed by
    the served repository's path, as `acdc commands` stores them; it is also where the
    command runs. With `waiting` (a page serves the turn), a proposal is shown through it
    and the call waits for the person's answer (`runs.answers`), which is its result;
    Stop ends the wait and the proposal is stopped."""
    result = ToolResult(stored_call_id(call.call_id), call.name, "ok", "")
    try:
        model = _ARGUMENTS[call.name][1]
        result.args = checked_arguments(call.arguments, model)
        result.args_display = display(call.name, result.args)
        if call.name == "run_command":
            await _run(session, result, runs, turn_id, root, on_output)
        else:
            await database_sync_to_async(_propose)(session, result, turn_id, str(root))
        if result.proposal is not None and waiting is not None:
            await _answer_awaited(result, runs, waiting)
    except ToolFailure as exc:
        result.status, result.output = "fail", f"Error: {exc}"
    except Exception as exc:  # a refusal nobody foresaw fails this call, not the turn
        log.exception("command tool %r failed unexpectedly", call.name)
        result.status, result.output = "fail", f"Error: the tool failed: {plain_reason(exc)}"
    await database_sync_to_async(record)(session, result, tool=call.name, args=result.args)
    return result


async def _run(
    session: Session,
    result: ToolResult,
    runs: CommandRuns,
    turn_id: str,
    root: Path,
    on_output: OnOutput | None,
) -> None:
    name = result.args["name"]
    command = await database_sync_to_async(declaring.find)(str(root), name)
    if command is None:
        known = await database_sync_to_async(declaring.known)(str(root))
        raise ToolFailure(f"there is no declared command {name[:60]!r}: nothing ran; {known}")
    if runs.needs_approval:
        reason = f"run the declared command {name!r} (no sandbox on this machine)"
        await database_sync_to_async(_pending)(session, result, turn_id, command.argv, reason)
        result.output = (
            f"{WAITING}: {runs.sandbox.reason}, so every command needs the developer's "
            f"approval; {name!r} did not run yet"
        )
        return
    outcome = await runs.run_declared(session, command, root, on_output)
    await database_sync_to_async(store_run)(session, turn_id, name, outcome)
    header = f"$ {command.shown}\n{outcome.summary(command.timeout_seconds)}\n"
    _answer_with_output(result, header, outcome.captured)
    result.status = "ok" if outcome.passed else "fail"


async def _answer_awaited(result: ToolResult, runs: CommandRuns, waiting: Waiting) -> None:
    """Show the proposal, wait for the person, and answer with what they decided: the
    run's exit status, duration and output (within the budget), or the denial."""
    await waiting(result.args_display, result.proposal)
    try:
        stop = database_sync_to_async(proposal_state.stop)
        row = await runs.answers.wait(result.proposal["id"], proposal_state.settled, stop)
    except asyncio.CancelledError:  # Stop: the card says the proposal stopped
        result.proposal = {**result.proposal, "status": CommandProposal.Status.STOPPED}
        await asyncio.shield(waiting(result.args_display, result.proposal))
        raise
    result.proposal = proposal_state.proposal_facts(row)
    line = declaring.shown(row.argv)
    if row.status == CommandProposal.Status.DENIED:
        result.output = f"denied: the developer did not allow `{line}`; nothing ran."
        return
    if row.run is None:  # gone with its session while the turn waited
        result.status, result.output = "fail", f"`{line}` did not run: the proposal is gone."
        return
    facts = result.proposal["run"]
    header = f"$ {line}\n{facts['ended'].replace('exit ', 'exit status ', 1)}\n"
    captured = Captured()
    captured.add(row.run.output.encode())
    _answer_with_output(result, header, captured)
    result.status = "ok" if facts["passed"] else "fail"


def _answer_with_output(result: ToolResult, header: str, captured: Captured) -> None:
    """The model's copy of a run's output after `header`, plain and within the budget; the
    card's copy keeps the colours (`shown`, only when there are any)."""
    copy = model_copy(captured, max(output_budget() - len(header.encode()), 0))
    result.output = header + copy.plain
    result.shown = header + copy.shown if copy.shown != copy.plain else ""


def store_run(session: Session, turn_id: str, name: str, outcome: RunOutcome) -> CommandRun:
    """A run as a row: what ran, how it ended, its output up to the cap."""
    return CommandRun.objects.create(
        session=session,
        turn_id=turn_id,
        name=name,
        argv=list(outcome.argv),
        exit_code=outcome.exit_code,
        ending=outcome.ending,
        duration_ms=int(outcome.duration * 1000),
        sandboxed=outcome.sandboxed,
        output=outcome.captured.stored_text(),
        output_bytes=outcome.captured.total,
    )


def _propose(session: Session, result: ToolResult, turn_id: str, repository: str) -> None:
    try:
        argv = declaring.check_argv(result.args["argv"])
    except declaring.DeclarationError as exc:
        raise ToolFailure(str(exc)) from None
    same = next((d for d in declaring.declared(repository) if d.argv == argv), None)
    if same is not None:
        raise ToolFailure(
            f"that is the declared command {same.name!r}: call run_command with that name"
        )
    _pending(session, result, turn_id, argv, result.args["reason"])
    result.output = (
        f"{WAITING}: proposed `{declaring.shown(argv)}`. Nothing has run; the developer "
        "decides whether it runs. Go on without its result."
    )


def _pending(
    session: Session, result: ToolResult, turn_id: str, argv, reason: str
) -> CommandProposal:
    """The proposal's row; the result names it, for the card the person answers."""
    row = CommandProposal.objects.create(
        session=session, turn_id=turn_id, call_id=result.call_id, argv=list(argv), reason=reason
    )
    result.proposal = {"id": row.pk, "argv": row.argv, "reason": reason, "status": row.status}
    return row
