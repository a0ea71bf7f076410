"""Starting bubblewrap for one run: its arguments, seccomp filter and network handed over by
file descriptor.

bubblewrap's options reach it through `--args FD` (a memfd of NUL-separated words), so the
host's `ps` and the run's `/proc/1/cmdline` show `bwrap --args N -- <the command>`, not the
paths it binds and masks. The seccomp filter (`seccomp`) comes as `--seccomp FD`. A run
declared with network also gets `--info-fd` (bubblewrap reports the pid inside the new
namespaces), `--block-fd` (the command waits until acdc writes to it) and its own
/etc/resolv.conf: `started` attaches slirp4netns (`netns`) to that pid, then lets the command
go. The runner passes `fds` to bubblewrap, calls `started` once it is spawned and `close`
when the run is over.
Non-goals: what the options say (`sandbox`), running and stopping the process (`runner`).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from chat.repo.commands.confine import netns, seccomp
from chat.repo.commands.confine.netns import NetworkError  # noqa: F401  (the runner's)
from chat.repo.commands.sandbox import Confinement, Sandbox, bwrap_options

NO_FILTER_NOTE = (
    "\n[acdc] this machine's architecture has no seccomp filter in acdc: the run could "
    "open a UNIX socket that is visible to it (none of the host's is bound)\n"
)


@dataclass
class Launch:
    command: list[str]  # bwrap --args N -- argv
    fds: tuple[int, ...]  # bubblewrap's ends: passed to it, closed here once it runs
    note: str = ""  # what the run's output should say about its sandbox
    info_read: int | None = None  # network runs: bubblewrap's --info-fd, acdc's end
    block_write: int | None = None  # network runs: the command starts once this is written
    attached: netns.Attached | None = field(default=None)

    async def started(self) -> None:
        """After the spawn: bubblewrap's ends closed; a network attached, then the command
        let go. Raises NetworkError when the network cannot be set up."""
        _close(self.fds)
        self.fds = ()
        if self.info_read is None or self.block_write is None:
            return
        pid = await _child_pid(self.info_read)
        await netns.loopback_up(pid)
        self.attached = await netns.attach(pid)
        os.write(self.block_write, b"1")
        _close((self.block_write,))
        self.block_write = None

    async def close(self) -> None:
        _close((*self.fds, *(fd for fd in (self.info_read, self.block_write) if fd)))
        self.fds, self.info_read, self.block_write = (), None, None
        if self.attached is not None:
            await self.attached.close()


def prepare(
    sandbox: Sandbox, box: Confinement, argv: Sequence[str], *, network: bool, empty_file: Path
) -> Launch:
    """bubblewrap's command for `argv` in `box`. Raises NetworkError when `network` is asked
    for and this machine has no user-mode network (never the host's instead)."""
    assert sandbox.bwrap is not None
    if network and (reason := netns.missing()):
        raise NetworkError(reason)
    options = bwrap_options(box, empty_file=empty_file)
    fds: list[int] = []
    launch = Launch([], ())
    program = seccomp.program()
    if program is None:
        launch.note = NO_FILTER_NOTE
    else:
        fds.append(_memfd("acdc-seccomp", program))
        options += ["--seccomp", str(fds[-1])]
    if network:
        launch.info_read, info_write = os.pipe()
        block_read, launch.block_write = os.pipe()
        fds += [info_write, block_read, _memfd("acdc-resolv", netns.resolv_conf())]
        options += ["--info-fd", str(info_write), "--block-fd", str(block_read)]
        options += ["--ro-bind-data", str(fds[-1]), "/etc/resolv.conf"]
    fds.append(_memfd("acdc-bwrap-args", b"".join(o.encode() + b"\0" for o in options)))
    launch.command = [sandbox.bwrap, "--args", str(fds[-1]), "--", *argv]
    launch.fds = tuple(fds)
    return launch


def _memfd(name: str, content: bytes) -> int:
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    os.write(fd, content)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


async def _child_pid(fd: int) -> int:
    """The pid bubblewrap reports on --info-fd (a JSON object), read as it comes."""
    text = b""
    while True:
        chunk = await netns.read_some(fd, 4096)
        if not chunk:
            raise NetworkError("bubblewrap ended before the run's network namespace was made")
        text += chunk
        try:
            info, _ = json.JSONDecoder().raw_decode(text.decode().lstrip())
        except ValueError:
            continue
        return int(info["child-pid"])


def _close(fds: Sequence[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
