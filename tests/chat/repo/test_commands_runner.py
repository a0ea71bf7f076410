"""Bounded runs with real processes: a command and the child it spawned die at the timeout
and on a cancel (plainly and inside bubblewrap); output keeps its order, is stored within
its cap and reaches the model within the budget as head, cut line and tail; one run at a
time per session."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid

import pytest

from chat.repo.commands.output import STORED_BYTES, Captured, for_model
from chat.repo.commands.runner import CommandRuns, run_argv
from chat.repo.commands.sandbox import Sandbox
from tests.chat.repo.commands_support import PYTHON, pids_with, wait_until_gone

pytestmark = pytest.mark.django_db

FIVE_MB = 5 * 1024 * 1024


def spawning(word: str) -> list[str]:
    """A shell that starts a child sleeping 1,000 s (findable by `word`), says so, waits."""
    child = f"{PYTHON} -c 'import time; time.sleep(1000)' {word}"
    return ["sh", "-c", f"{child} & echo started; wait"]


@pytest.fixture(params=["plain", "bubblewrap"])
def sandbox(request) -> Sandbox | None:
    if request.param == "plain":
        return None
    found = Sandbox.probe()
    assert found.available, f"bubblewrap is needed (make test installs it): {found.reason}"
    return found


async def test_the_timeout_kills_the_command_and_its_child(root, sandbox):
    word = f"acdc-timeout-{uuid.uuid4().hex}"
    started = asyncio.Event()

    async def seen(chunk: bytes) -> None:
        if b"started" in chunk:
            started.set()
            assert pids_with(word)  # the child lives while the run does

    outcome = await run_argv(spawning(word), root=root, timeout=3, sandbox=sandbox, on_output=seen)

    assert started.is_set()
    assert outcome.ending == "timeout" and outcome.exit_code is None
    assert "killed at its timeout of 3 s" in outcome.summary(3)
    assert wait_until_gone(word) == []


async def test_a_cancel_kills_the_command_and_its_child(root, sandbox):
    word = f"acdc-cancel-{uuid.uuid4().hex}"
    started = asyncio.Event()

    async def seen(chunk: bytes) -> None:
        if b"started" in chunk:
            started.set()

    run = asyncio.create_task(
        run_argv(spawning(word), root=root, timeout=600, sandbox=sandbox, on_output=seen)
    )
    await started.wait()
    assert pids_with(word)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert wait_until_gone(word) == []


async def test_a_child_left_behind_by_a_finished_command_is_killed(root):
    word = f"acdc-orphan-{uuid.uuid4().hex}"
    # The shell exits at once; its child, whose output goes elsewhere, would live on.
    child = f"{PYTHON} -c 'import time; time.sleep(1000)' {word} >/dev/null 2>&1 &"
    outcome = await run_argv(["sh", "-c", child], root=root, timeout=60)
    assert outcome.ending == "exited" and outcome.exit_code == 0
    assert wait_until_gone(word) == []


async def test_output_keeps_its_order_across_stdout_and_stderr(root, sandbox):
    script = "for i in 1 2 3; do echo out$i; echo err$i >&2; done; exit 3"
    outcome = await run_argv(["sh", "-c", script], root=root, timeout=60, sandbox=sandbox)
    assert outcome.captured.stored_text().split() == [
        "out1", "err1", "out2", "err2", "out3", "err3"
    ]  # fmt: skip
    assert (outcome.ending, outcome.exit_code, outcome.passed) == ("exited", 3, False)


async def test_five_megabytes_reach_the_model_as_head_cut_line_and_tail(root):
    code = (
        "import sys\n"
        "sys.stdout.write('FIRST LINE\\n')\n"
        f"for i in range({FIVE_MB // 100 + 1}):\n"
        "    sys.stdout.write(f'{i:08d} ' + 'x' * 90 + '\\n')\n"
        "sys.stdout.write('LAST LINE: 3 failed, 97 passed\\n')\n"
    )
    outcome = await run_argv([PYTHON, "-c", code], root=root, timeout=120)
    captured = outcome.captured
    assert captured.total > FIVE_MB
    assert len(captured.head) == STORED_BYTES  # stored whole up to its cap

    text = for_model(captured, 8192)

    assert len(text.encode()) <= 8192
    assert text.startswith(f"[output cut: {captured.total:,} bytes in all;")
    assert text.splitlines()[1] == "FIRST LINE"
    assert text.rstrip().endswith("LAST LINE: 3 failed, 97 passed")
    assert "bytes not stored" in captured.stored_text()


def test_output_within_the_budget_reaches_the_model_whole_and_redacted():
    captured = Captured()
    captured.add(b"ok\nkey: sk-ant-api03-" + b"a" * 90 + b"\n")
    text = for_model(captured, 8192)
    assert text.startswith("ok\n") and "sk-ant-api03" not in text
    assert "[redacted: " in text and "output cut" not in text


async def test_one_run_at_a_time_per_session(root):
    runs = CommandRuns(Sandbox(None, reason="plain for this test"))
    gate = root / "gate"
    first_started = asyncio.Event()

    async def seen(chunk: bytes) -> None:
        first_started.set()

    # The first run waits for a file the test makes only once the second was asked for.
    waiting = ["sh", "-c", f"echo waiting; while [ ! -e {gate} ]; do sleep 0.05; done; echo one"]
    first = asyncio.create_task(runs.run("s1", waiting, root=root, timeout=60, on_output=seen))
    await first_started.wait()
    second = asyncio.create_task(runs.run("s1", ["echo", "two"], root=root, timeout=60))
    other = await runs.run("s2", ["echo", "other session"], root=root, timeout=60)
    assert other.passed  # another session is not held up
    assert runs.busy("s1") and not second.done()
    gate.touch()
    done_first, done_second = await first, await second
    assert done_first.captured.stored_text().endswith("one\n")
    assert done_second.captured.stored_text() == "two\n"


async def test_a_program_that_does_not_exist_is_said_not_to_start(root):
    outcome = await run_argv(["no-such-program-acdc"], root=root, timeout=60)
    assert outcome.ending == "failed"
    assert "did not start: No such file or directory" in outcome.summary(60)


SERVER = """
import asyncio, sys
from pathlib import Path
from chat.repo.commands.runner import run_argv
from chat.repo.commands.sandbox import Sandbox

async def main():
    async def seen(chunk):
        if b"started" in chunk:
            print("started", flush=True)
    root, argv = Path(sys.argv[1]), sys.argv[2:]
    await run_argv(argv, root=root, timeout=600, sandbox=Sandbox.probe(), on_output=seen)

asyncio.run(main())
"""


def test_a_sandboxed_run_dies_with_the_process_that_started_it(root, tmp_path):
    """kill -9 of the server: nothing it ran lives on (bubblewrap's --die-with-parent, and
    the run's own process namespace)."""
    word = f"acdc-server-killed-{uuid.uuid4().hex}"
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ACDC_")}
    environ.update(ACDC_REPO=str(root), ACDC_DATA_DIR=str(tmp_path / "data"))
    environ["DJANGO_SETTINGS_MODULE"] = "acdc.settings"
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(root), *spawning(word)],
        stdout=subprocess.PIPE,
        text=True,
        env=environ,
    )
    try:
        assert server.stdout.readline().strip() == "started"
        assert pids_with(word)
    finally:
        server.kill()
        server.wait()
        server.stdout.close()
    assert wait_until_gone(word) == []
