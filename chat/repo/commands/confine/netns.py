"""The network of a run declared with network: its own namespace, joined to the outside by
slirp4netns, never to the host's loopback.

Every sandboxed run gets its own network namespace (bubblewrap's `--unshare-net`). For a
run declared with network, slirp4netns (a user-mode TCP/IP stack, Debian's package of the
name) is attached to that namespace by the pid bubblewrap reports on `--info-fd`, with
`--disable-host-loopback`: the run gets a `tap0` (10.0.2.100, gateway 10.0.2.2, DNS
10.0.2.3) that reaches outside networks through the host's connections, while 10.0.2.2
does not lead to the host's 127.0.0.1 and the run's own 127.0.0.1 is its namespace's.
The command waits on `--block-fd` until the network is up. slirp4netns ends with the run,
and with acdc (`--exit-fd`: the pipe's other end is acdc's).
Without slirp4netns a run declared with network does not start (`missing`): it never falls
back to the host's network.
Non-goals: the namespace's other walls (`sandbox`), the process tree (`runner`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from dataclasses import dataclass, field

PROGRAM = "slirp4netns"
DNS = "10.0.2.3"
READY_SECONDS = 20.0
GRACE_SECONDS = 2.0
LOOPBACK_UP = b"127.255.255.255"  # in fib_trie once the loopback is up with 127.0.0.1/8


class NetworkError(Exception):
    """The run's network could not be set up; the run does not go on without it."""


def missing() -> str:
    """Why no run may have network here, or "" when slirp4netns is installed."""
    if shutil.which(PROGRAM) is None:
        return (
            f"the command is declared with network, and {PROGRAM} (the user-mode network "
            "that keeps a run off the host's loopback) is not installed: apt-get install "
            f"{PROGRAM} (make test does it as root)"
        )
    return ""


@dataclass
class Attached:
    """slirp4netns serving one run's namespace; `close` ends it."""

    process: asyncio.subprocess.Process
    exit_fd: int  # the write end of slirp4netns's --exit-fd: closing it ends slirp4netns
    closed: bool = field(default=False)

    async def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(OSError):
            os.close(self.exit_fd)
        try:
            await asyncio.wait_for(self.process.wait(), GRACE_SECONDS)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            await self.process.wait()


async def loopback_up(pid: int) -> None:
    """Wait until bubblewrap has brought up the loopback of `pid`'s namespace (its
    broadcast address is in the namespace's routing table). bubblewrap does that after it
    reports the pid, and a slirp4netns configuring tap0 at the same moment made its
    netlink request fail now and then ("loopback: Failed RTM_NEWADDR"). The command is
    held on --block-fd meanwhile; a namespace that never comes up is slirp4netns's
    timeout's business."""
    table = f"/proc/{pid}/net/fib_trie"
    deadline = asyncio.get_running_loop().time() + READY_SECONDS
    delay = 0.001
    while asyncio.get_running_loop().time() < deadline:
        try:
            with open(table, "rb") as routes:
                if LOOPBACK_UP in routes.read():
                    return
        except OSError:
            return  # bubblewrap is gone; its exit says why
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.05)


async def attach(pid: int) -> Attached:
    """slirp4netns in the network namespace of `pid`, once its tap0 is configured."""
    program = shutil.which(PROGRAM)
    if program is None:
        raise NetworkError(missing())
    exit_read, exit_write = os.pipe()
    ready_read, ready_write = os.pipe()
    try:
        process = await asyncio.create_subprocess_exec(
            *(program, "--configure", "--mtu=65520", "--disable-host-loopback"),
            *(f"--exit-fd={exit_read}", f"--ready-fd={ready_write}", str(pid), "tap0"),
            pass_fds=(exit_read, ready_write),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        for fd in (exit_read, exit_write, ready_read, ready_write):
            os.close(fd)
        raise NetworkError(f"{PROGRAM} cannot start: {exc.strerror or exc}") from exc
    os.close(exit_read)
    os.close(ready_write)
    attached = Attached(process, exit_write)
    try:
        ready = await asyncio.wait_for(read_some(ready_read, 1), READY_SECONDS)
    except TimeoutError:
        ready = b""
    finally:
        os.close(ready_read)
    if ready != b"1":
        await attached.close()
        detail = b""
        if process.stderr is not None:
            detail = await process.stderr.read(4096)
        lines = detail.decode(errors="replace").strip().splitlines()
        raise NetworkError(f"{PROGRAM} did not set up the network: {lines[-1] if lines else ''}")
    return attached


async def read_some(fd: int, size: int) -> bytes:
    """Up to `size` bytes from a pipe once it is readable, without a thread (a cancel
    leaves nothing behind): b"" when every writer is gone."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[bytes] = loop.create_future()

    def readable() -> None:
        if not done.done():
            try:
                done.set_result(os.read(fd, size))
            except OSError:
                done.set_result(b"")

    loop.add_reader(fd, readable)
    try:
        return await done
    finally:
        loop.remove_reader(fd)


def resolv_conf() -> bytes:
    """/etc/resolv.conf inside a run with network: slirp4netns's DNS forwarder (the host's
    may name 127.0.0.53, which is the run's own loopback there)."""
    return f"nameserver {DNS}\n".encode()
