"""Running one command, bounded: its own process group, a timeout, a cancel, a lock per session.

`run_argv` starts the argv in the repository root (chosen here, never by the model) with
the sandbox's environment, in a new session and process group, inside bubblewrap when the
caller asks for it. Its stdout and stderr share one pipe, so the output keeps its order; it
is read as it comes (`on_output` gets each chunk, for a live view) into a `Captured`. At
the timeout, or when the awaiting task is cancelled (Stop, Ctrl-C, a server shutting down),
the whole group and every process below the command get SIGTERM and, after
`GRACE_SECONDS`, SIGKILL; a group left behind by a command that exited is killed too, so
no process it started outlives the run. (Outside bubblewrap, a program that makes itself
a new session and whose parent already exited escapes; inside, its process namespace
ends with the run.)

`CommandRuns` is the owner a caller hands in (a server, a test, a benchmark): the sandbox it
found, said once when there is none, and one run at a time per session.
Non-goals: which argv may run (`model_tools`), storing runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from chat.repo import protected
from chat.repo.commands.confine import launch
from chat.repo.commands.confine.launch import Launch, NetworkError
from chat.repo.commands.limits import Limits, RunGroup
from chat.repo.commands.output import Captured
from chat.repo.commands.sandbox import Sandbox, confinement, environment, take_out
from chat.repo.commands.waits import ProposalWaits

log = logging.getLogger(__name__)
GRACE_SECONDS = 2.0
CHUNK_BYTES = 64 * 1024
OnOutput = Callable[[bytes], Awaitable[None]]


@dataclass
class RunOutcome:
    argv: tuple[str, ...]
    ending: str  # exited | timeout | failed | stopped (Stop; a cancelled caller raises)
    exit_code: int | None
    duration: float
    captured: Captured
    sandboxed: bool
    error: str = ""  # why it did not start
    limit: str = ""  # the limit that stopped it, as a sentence (limits.RunGroup)

    @property
    def passed(self) -> bool:
        return self.ending == "exited" and self.exit_code == 0

    def summary(self, timeout: float) -> str:
        took = f"{self.duration:.1f} s"
        if self.ending == "timeout":
            return f"killed at its timeout of {timeout:g} s (ran {took})"
        if self.ending == "failed":
            return f"did not start: {self.error}"
        if self.ending == "stopped":
            return f"stopped by the person after {took}"
        if self.limit:
            return f"stopped: {self.limit} (exit status {self.exit_code} after {took})"
        if self.exit_code is not None and self.exit_code < 0:
            return f"killed by signal {-self.exit_code} after {took}"
        return f"exit status {self.exit_code} after {took}"


async def run_argv(
    argv: Sequence[str],
    *,
    root: Path,
    timeout: float,
    sandbox: Sandbox | None = None,
    network: bool = False,
    data_dir: Path | None = None,
    floor: tuple[str, ...] = (),
    on_output: OnOutput | None = None,
    environ: dict[str, str] | None = None,
    captured: Captured | None = None,
    extra_read: tuple[Path, ...] = (),
) -> RunOutcome:
    """Run `argv` in `root` until it exits or `timeout` seconds pass; inside bubblewrap
    when `sandbox` is given (it must be available), which shows it `extra_read` too.
    Raises CancelledError when cancelled, after the process group is gone."""
    argv, captured = tuple(argv), Captured() if captured is None else captured
    env = environment(environ)
    started = time.monotonic()
    data = Path(data_dir or settings.ACDC_DATA_DIR)
    guards = await asyncio.to_thread(protected.absent, root)
    with tempfile.TemporaryDirectory(prefix="acdc-run-") as scratch:
        command, wrap = list(argv), None
        if sandbox is not None:
            try:
                places = _Places(root, data, Path(scratch), floor, extra_read)
                wrap = await _wrap(sandbox, argv, places, env, network)
            except NetworkError as exc:
                return RunOutcome(argv, "failed", None, 0.0, captured, True, str(exc))
            command = wrap.command
        group = await RunGroup(Limits.configured()).opened()
        try:
            process = await _spawn(group.preexec(), command, root, env, sandbox is not None, wrap)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            await group.close()
            if wrap is not None:
                await wrap.close()
            return RunOutcome(argv, "failed", None, 0.0, captured, sandbox is not None, reason)
        ending, error = "exited", ""
        try:
            async with asyncio.timeout(timeout):
                if wrap is not None:
                    await wrap.started()  # its network up before the command starts
                await _pump(process, captured, on_output)
                await process.wait()
        except TimeoutError:
            ending = "timeout"
            await _stop(process, sandbox is not None)
        except NetworkError as exc:
            ending, error = "failed", str(exc)
            await _stop(process, True)
        except asyncio.CancelledError:
            await asyncio.shield(_stop(process, sandbox is not None))
            raise
        finally:
            _kill_group(process.pid)
            await asyncio.shield(group.close())
            if wrap is not None:
                await asyncio.shield(wrap.close())
                captured.add(wrap.note.encode())
            moved = take_out(guards, root, data)
            if moved:
                captured.add(_moved_note(moved).encode())
    duration = time.monotonic() - started
    code = process.returncode if ending == "exited" else None
    outcome = RunOutcome(argv, ending, code, duration, captured, sandbox is not None, error)
    outcome.limit = group.stopped_by(ending, code, captured, root)
    return outcome


@dataclass(frozen=True)
class _Places:
    """Where a sandboxed run happens: its tree, acdc's data, its scratch folder, the
    session's secret floor and the declared extra read paths."""

    root: Path
    data: Path
    scratch: Path
    floor: tuple[str, ...]
    extra_read: tuple[Path, ...]


async def _wrap(
    sandbox: Sandbox, argv: Sequence[str], at: _Places, env: dict[str, str], network: bool
) -> Launch:
    """bubblewrap's launch for the run: what it may see, worked out from the disk now."""
    empty = at.scratch / "empty"
    empty.touch(mode=0o444)
    box = await asyncio.to_thread(
        confinement,
        at.root,
        at.data,
        floor=at.floor,
        argv=argv,
        environ=env,
        extra_read=at.extra_read,
    )
    return launch.prepare(sandbox, box, argv, network=network, empty_file=empty)


def _moved_note(moved: tuple[str, ...]) -> str:
    return (
        f"\n[acdc] this run created {', '.join(moved)}, which guard acdc or run code "
        "later (git, other agents, editors); moved out of the work tree into acdc's data "
        "folder (quarantine)\n"
    )


async def _spawn(
    preexec: Callable[[], None],
    command: list[str],
    root: Path,
    env: dict[str, str],
    sandboxed: bool,
    wrap: Launch | None,
) -> asyncio.subprocess.Process:
    """Start the process (bubblewrap gets `wrap`'s descriptors); a cancel that comes while
    it starts still finds and stops it (the fork has happened before the coroutine hands
    the process back)."""
    spawning = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *command,
            cwd=root,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=preexec,  # its limits
            pass_fds=wrap.fds if wrap is not None else (),
        )
    )
    try:
        return await asyncio.shield(spawning)
    except asyncio.CancelledError:
        with contextlib.suppress(OSError):
            process = await spawning
            await _stop(process, sandboxed)
            _kill_group(process.pid)
        raise


async def _pump(
    process: asyncio.subprocess.Process, captured: Captured, on_output: OnOutput | None
) -> None:
    assert process.stdout is not None
    while chunk := await process.stdout.read(CHUNK_BYTES):
        captured.add(chunk)
        if on_output is not None:
            await on_output(chunk)


async def _stop(process: asyncio.subprocess.Process, sandboxed: bool) -> None:
    """SIGTERM to the group and every process below the command, then SIGKILL to whatever
    is left after the grace. The processes below are named first: inside bubblewrap the
    command runs in a session of its own (`--new-session`), out of the group's reach, and
    bubblewrap killed first does not always take its namespace with it (its namespace's
    first process may not yet have asked to die with it): so there, what runs inside is
    ended first, then bubblewrap."""
    tree = _descendants(process.pid)
    if sandboxed:  # bubblewrap itself keeps running till its namespace is gone
        _signal(None, tree, signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), GRACE_SECONDS)
        _signal(None, tree + _descendants(process.pid), signal.SIGKILL)
    else:
        _signal(process.pid, tree, signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), GRACE_SECONDS)
    _signal(process.pid, tree + _descendants(process.pid), signal.SIGKILL)
    await process.wait()


def _kill_group(pgid: int) -> None:
    _signal(pgid, [], signal.SIGKILL)


def _signal(pgid: int | None, pids: list[int], number: int) -> None:
    if pgid is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, number)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, number)


def _descendants(pid: int) -> list[int]:
    """The processes below `pid` now, from /proc (none where there is no /proc)."""
    children: dict[int, list[int]] = {}
    try:
        entries = [e.name for e in os.scandir("/proc") if e.name.isdigit()]
    except OSError:
        return []
    for name in entries:
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                parent = int(stat.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(name))
    found, waiting = [], [pid]
    while waiting:
        below = children.get(waiting.pop(), [])
        found += below
        waiting += below
    return found


class CommandRuns:
    """The runs of one owner: the sandbox found on this machine (looked for once, and said
    once when missing), and one run at a time per session."""

    def __init__(self, sandbox: Sandbox | None = None) -> None:
        self._sandbox = sandbox
        self._locks: dict[str, asyncio.Lock] = {}
        self._running: dict[str, asyncio.Task] = {}  # each session's run, for Stop
        # The proposals turns wait on for the person's answer (a page's turns only).
        self.answers = ProposalWaits()

    @property
    def sandbox(self) -> Sandbox:
        if self._sandbox is None:
            self._sandbox = Sandbox.probe()
            if not self._sandbox.available:
                log.warning(
                    "commands run without a sandbox: %s; every run the model starts needs "
                    "the person's approval",
                    self._sandbox.reason,
                )
        return self._sandbox

    @property
    def needs_approval(self) -> bool:
        """Without bubblewrap, nothing the model starts runs before the person says so."""
        return not self.sandbox.available

    def stop(self, session_id: str) -> bool:
        """Stop (the page's button): the session's run in this process, if one runs, is
        killed with everything it started; its caller gets it back as "stopped"."""
        task = self._running.get(session_id)
        if task is None or task.done():
            return False
        return task.cancel()

    def busy(self, session_id: str) -> bool:
        lock = self._locks.get(session_id)
        return lock is not None and lock.locked()

    async def run_declared(
        self, session, command, root: Path, on_output: OnOutput | None = None
    ) -> RunOutcome:
        """Run the person's declared `command` (history's DeclaredCommand) for `session`
        at `root`, with its timeout, network and read paths, the session's secret floor
        masked."""
        return await self.run(
            session.id,
            command.argv,
            root=root.resolve(),
            timeout=command.timeout_seconds,
            network=command.network,
            floor=tuple(session.secret_floor or ()),
            on_output=on_output,
            extra_read=tuple(Path(p) for p in command.read_paths or ()),
        )

    async def run(
        self,
        session_id: str,
        argv: Sequence[str],
        *,
        root: Path,
        timeout: float,
        network: bool = False,
        floor: tuple[str, ...] = (),
        on_output: OnOutput | None = None,
        extra_read: tuple[Path, ...] = (),
    ) -> RunOutcome:
        """Run `argv` sandboxed (plainly when there is no sandbox: the caller has the
        person's approval), after any run of the same session has ended."""
        lock = self._locks.setdefault(session_id, asyncio.Lock())
        sandbox = self.sandbox if self.sandbox.available else None
        async with lock:
            captured, started = Captured(), time.monotonic()
            task = asyncio.ensure_future(
                run_argv(
                    argv,
                    root=root,
                    timeout=timeout,
                    sandbox=sandbox,
                    network=network,
                    floor=floor,
                    on_output=on_output,
                    captured=captured,
                    extra_read=extra_read,
                )
            )
            self._running[session_id] = task
            try:
                return await task
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise  # the caller itself was cancelled (its turn's Stop, a shutdown)
                took = time.monotonic() - started
                return RunOutcome(tuple(argv), "stopped", None, took, captured, bool(sandbox))
            finally:
                if self._running.get(session_id) is task:
                    del self._running[session_id]
