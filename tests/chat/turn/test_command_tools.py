"""The command tools in a real turn: `acdc/fake` (through litellm) scripted to call them,
real processes in real bubblewrap.

A declared command runs and its exit status and output reach the next request; an
undeclared name and a proposal run nothing (no marker file, no connection to a loopback
listener); without a sandbox a declared command waits for the person too; Stop (the turn's
task cancelled) kills a running command and the child it spawned.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import uuid

import pytest
from channels.db import database_sync_to_async

from chat.live.served import served
from chat.llm.fake import FakeStep
from chat.repo.commands import declaring
from chat.repo.commands.runner import CommandRuns
from chat.repo.commands.sandbox import Sandbox
from chat.turn.events import ToolCallFinished, ToolCallStarted
from chat.turn.turns import TurnInput, TurnServices, run_turn
from history.models import CommandProposal, CommandRun
from tests.chat.repo.commands_support import (
    PYTHON,
    Listener,
    connect_code,
    pids_with,
    wait_until_gone,
)
from tests.chat.sockets import WAIT, new_session

pytestmark = pytest.mark.django_db(transaction=True)


def call(name: str, arguments: dict, call_id: str) -> dict:
    return {"id": call_id, "name": name, "arguments": arguments}


async def turn(session, text: str, commands: CommandRuns | None = None) -> list:
    events: list = []

    async def emit(event) -> None:
        events.append(event)

    await run_turn(
        TurnInput(session_id=session.id, user_text=text, model="acdc/fake"),
        TurnServices(emit=emit, wiring=served(), commands=commands),
    )
    return events


@database_sync_to_async
def declare(root, name: str, argv: list[str], **terms) -> None:
    declaring.add(str(root), name, argv, **terms)


def tool_answers(request) -> list[str]:
    return [m["content"] for m in request.messages if m.get("role") == "tool"]


def marking(root, listener: Listener) -> list[str]:
    """A command that leaves a marker file and knocks on the listener."""
    code = connect_code(listener.port)
    return ["sh", "-c", f"touch {root}/marker; {PYTHON} -c {shlex.quote(code)}"]


async def test_a_declared_commands_result_reaches_the_next_request(fake, served_root):
    script = "echo ran > ran.txt; echo '2 failed, 8 passed'; echo 'E assert 1 == 2' >&2; exit 1"
    await declare(served_root, "test", ["sh", "-c", script])
    session = await new_session()
    fake.enqueue(
        FakeStep(
            text="Running the tests.", tool_calls=[call("run_command", {"name": "test"}, "c1")]
        ),
        FakeStep(text="Two tests fail."),
    )

    events = await turn(session, "Do the tests pass?")

    offered = {t["function"]["name"] for t in fake.requests[0].tools}
    assert {"run_command", "propose_command"} <= offered
    [answer] = tool_answers(fake.requests[-1])
    assert answer.startswith(f"$ sh -c {shlex.quote(script)}  [a shell]\nexit status 1 after ")
    assert "2 failed, 8 passed\nE assert 1 == 2" in answer
    assert (served_root / "ran.txt").read_text() == "ran\n"  # it ran, in the work tree
    [card] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert (card.tool, card.status) == ("run_command", "fail")
    run = await database_sync_to_async(CommandRun.objects.get)(session=session)
    assert (run.name, run.exit_code, run.ending, run.sandboxed) == ("test", 1, "exited", True)


async def test_an_undeclared_name_and_a_proposal_run_nothing(fake, served_root):
    listener = Listener()
    await declare(served_root, "lint", ["true"])
    session = await new_session()
    argv = marking(served_root, listener)
    fake.enqueue(
        FakeStep(
            tool_calls=[
                call("run_command", {"name": argv[-1]}, "c1"),
                call("run_command", {"name": "marker"}, "c2"),
                call("propose_command", {"argv": argv, "reason": "to see the marker"}, "c3"),
            ]
        ),
        FakeStep(text="I will wait."),
    )
    try:
        await turn(session, "Run it")
        assert not listener.connected()
    finally:
        listener.close()

    assert not (served_root / "marker").exists()
    unknown, also_unknown, proposed = tool_answers(fake.requests[-1])
    assert unknown.startswith("Error: there is no declared command")
    assert (
        also_unknown == "Error: there is no declared command 'marker': nothing ran; declared: lint"
    )
    assert proposed.startswith("waiting for the person: proposed `sh -c ")
    rows = await database_sync_to_async(list)(CommandProposal.objects.filter(session=session))
    assert [(r.argv, r.reason, r.status) for r in rows] == [(argv, "to see the marker", "pending")]
    assert not await database_sync_to_async(CommandRun.objects.exists)()


async def test_without_a_sandbox_a_declared_command_waits_for_the_person(fake, served_root):
    listener = Listener()
    await declare(served_root, "test", marking(served_root, listener))
    session = await new_session()
    fake.enqueue(
        FakeStep(tool_calls=[call("run_command", {"name": "test"}, "c1")]),
        FakeStep(text="Waiting."),
    )
    no_sandbox = CommandRuns(Sandbox(None, reason="bwrap (Debian's bubblewrap) is not installed"))
    try:
        await turn(session, "Run the tests", commands=no_sandbox)
        assert not listener.connected()
    finally:
        listener.close()

    assert no_sandbox.needs_approval
    assert not (served_root / "marker").exists()
    [answer] = tool_answers(fake.requests[-1])
    assert answer.startswith("waiting for the person: bwrap (Debian's bubblewrap) is not")
    proposal = await database_sync_to_async(CommandProposal.objects.get)(session=session)
    assert proposal.status == "pending" and proposal.argv[0] == "sh"


async def test_stop_kills_a_running_command_and_its_child(fake, served_root):
    word = f"acdc-stop-{uuid.uuid4().hex}"
    child = f"{PYTHON} -c 'import time; time.sleep(1000)' {word}"
    await declare(served_root, "serve", ["sh", "-c", f"{child} & wait"])
    session = await new_session()
    fake.enqueue(FakeStep(tool_calls=[call("run_command", {"name": "serve"}, "c1")]))
    running = asyncio.Event()

    async def emit(event) -> None:
        if isinstance(event, ToolCallStarted):
            running.set()

    task = asyncio.create_task(
        run_turn(
            TurnInput(session_id=session.id, user_text="Start it", model="acdc/fake"),
            TurnServices(emit=emit, wiring=served()),
        )
    )
    await running.wait()
    async with asyncio.timeout(WAIT):  # the sandbox starts the child a moment later
        while not pids_with(word):
            assert not task.done(), f"the command never started: {task}"
            await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert wait_until_gone(word) == []


def test_the_tool_arguments_are_checked(fake):
    from chat.repo.commands.model_tools import COMMAND_TOOL_SPECS

    specs = {s["function"]["name"]: s["function"]["parameters"] for s in COMMAND_TOOL_SPECS}
    assert specs["run_command"]["required"] == ["name"]
    assert specs["propose_command"]["properties"]["argv"]["type"] == "array"
    assert json.dumps(specs)  # what the provider is sent


async def test_hostile_arguments_run_nothing_and_each_gets_its_reason(fake, served_root):
    """What a model may try instead of a declared name or a plain argv: paths, shell
    text, options, a working directory of its own, wrong types, garbage, a huge argv.
    Each call fails alone with a reason; the turn goes on; nothing runs or is proposed."""
    listener = Listener()
    await declare(served_root, "test", ["true"])
    session = await new_session()
    marker = marking(served_root, listener)
    hostile_runs = [
        {"name": "../../../bin/sh"},
        {"name": f"test; {shlex.join(marker)}"},
        {"name": "--help"},
        {"name": "test", "cwd": "/"},
        {"name": "test", "env": {"LD_PRELOAD": "/tmp/x.so"}},
        {"name": ["test"]},
        {},
        "{not json",
        ["test"],
        {"name": "t" * 100_000},
    ]
    hostile_proposals = [
        {"argv": shlex.join(marker), "reason": "a string, not a list"},
        {"argv": [], "reason": "empty"},
        {"argv": ["  ", "x"], "reason": "blank program"},
        {"argv": ["sh", "-c", "touch marker\0"], "reason": "a NUL"},
        {"argv": ["echo", *["x"] * 5_000], "reason": "too long"},
        {"argv": marker},
        {"argv": ["true"], "reason": "the declared one, again"},
    ]
    calls = [call("run_command", args, f"r{i}") for i, args in enumerate(hostile_runs)]
    calls += [call("propose_command", args, f"p{i}") for i, args in enumerate(hostile_proposals)]
    fake.enqueue(FakeStep(tool_calls=calls), FakeStep(text="Nothing ran."))
    try:
        events = await turn(session, "Try everything")
        assert not listener.connected()
    finally:
        listener.close()

    answers = tool_answers(fake.requests[-1])
    assert len(answers) == len(calls)
    assert all(a.startswith("Error: ") for a in answers), answers
    said = dict(zip([c["id"] for c in calls], answers, strict=True))
    assert (
        "there is no declared command '../../../bin/sh': nothing ran; declared: test" in said["r0"]
    )
    assert "unexpected argument 'cwd'" in said["r3"] and "unexpected argument 'env'" in said["r4"]
    assert "not valid JSON" in said["r7"] and "must be a JSON object" in said["r8"]
    assert "missing argument 'reason'" in said["p5"]
    assert "that is the declared command 'test'" in said["p6"]
    assert not (served_root / "marker").exists()
    assert not await database_sync_to_async(CommandRun.objects.exists)()
    assert not await database_sync_to_async(CommandProposal.objects.exists)()
    assert events[-1].__class__.__name__ != "TurnFailed"
    assert fake.requests[-1].messages[-1]["role"] == "tool"  # the turn went on to the model
