"""The seccomp filter a sandboxed run gets: no new UNIX socket, no io_uring.

A second layer under the filesystem allowlist (`sandbox`): even a host socket that stayed
visible cannot be reached, because `socket(AF_UNIX, …)` fails with EPERM (and
`socket(AF_VSOCK, …)`, a path to a virtual machine's host). `socketpair` is untouched
(asyncio's and multiprocessing's pipes need it), as is every other family (TCP and UDP
stay in the run's own network namespace). `io_uring_setup` fails too: io_uring can make a
socket without the `socket` system call. A program of the other ABI the kernel accepts on
this machine (i386 on x86_64, 32-bit ARM on aarch64) is held to the same rule; its
`socketcall` (whose arguments a filter cannot read) fails whole, as does every x32 call.

The filter is classic BPF written here with `struct` (libseccomp's bindings exist only for
the system's Python), in the form bubblewrap's `--seccomp FD` loads. `program()` is None on
an architecture this module has no system-call numbers for: such a run has no filter, and
the sandbox says so.
Non-goals: which files a run sees (`sandbox`), its network (`netns`).
"""

from __future__ import annotations

import errno
import platform
import socket
import struct
from dataclasses import dataclass

LOAD_WORD = 0x20  # BPF_LD | BPF_W | BPF_ABS
JUMP_EQUAL = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
JUMP_AT_LEAST = 0x35  # BPF_JMP | BPF_JGE | BPF_K
RETURN = 0x06  # BPF_RET | BPF_K
ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
REFUSE = 0x00050000 | errno.EPERM  # SECCOMP_RET_ERRNO
# Offsets in struct seccomp_data: nr, arch, then the arguments (the low word first).
NR, ARCH, FIRST_ARGUMENT = 0, 4, 16
X32_BIT = 0x40000000
REFUSED_FAMILIES = (socket.AF_UNIX, getattr(socket, "AF_VSOCK", 40))


@dataclass(frozen=True)
class Abi:
    """One system-call table: its audit architecture and the numbers the filter needs."""

    arch: int
    socket: int
    io_uring_setup: int = 425
    socketcall: int | None = None  # the multiplexer, where the ABI has one
    x32: bool = False  # x86_64's table, where x32 calls carry X32_BIT


X86_64 = Abi(0xC000003E, socket=41, x32=True)
I386 = Abi(0x40000003, socket=359, socketcall=102)
AARCH64 = Abi(0xC00000B7, socket=198)
ARM = Abi(0x40000028, socket=281)
# platform.machine()'s names, and the tables a process there may call by.
ABIS = (
    (("x86_64", "amd64"), (X86_64, I386)),
    (("aarch64", "arm64"), (AARCH64, ARM)),
)


def program(machine: str | None = None) -> bytes | None:
    """The filter for this machine (`platform.machine()`), as struct sock_filter items;
    None where this module does not know the architecture's system calls."""
    name = (machine or platform.machine()).lower()
    for names, abis in ABIS:
        if name in names:
            return assemble(_instructions(abis))
    return None


Instruction = tuple[int, int, str | int, str | int]  # code, k, then labels or offsets


def _instructions(abis: tuple[Abi, ...]) -> list[tuple[str | None, Instruction]]:
    """The program with symbolic jump targets: dispatch on the architecture, then on the
    call's number, then (for socket) on its first argument, the address family."""
    code: list[tuple[str | None, Instruction]] = [(None, (LOAD_WORD, ARCH, 0, 0))]
    for index, abi in enumerate(abis):
        code.append((None, (JUMP_EQUAL, abi.arch, f"abi{index}", 0)))
    code.append((None, (RETURN, REFUSE, 0, 0)))  # an ABI of no table here: refused
    for index, abi in enumerate(abis):
        code.append((f"abi{index}", (LOAD_WORD, NR, 0, 0)))
        if abi.x32:
            code.append((None, (JUMP_AT_LEAST, X32_BIT, "refuse", 0)))
        code.append((None, (JUMP_EQUAL, abi.socket, "family", 0)))
        code.append((None, (JUMP_EQUAL, abi.io_uring_setup, "refuse", 0)))
        if abi.socketcall is not None:
            code.append((None, (JUMP_EQUAL, abi.socketcall, "refuse", 0)))
        code.append((None, (RETURN, ALLOW, 0, 0)))
    code.append(("family", (LOAD_WORD, FIRST_ARGUMENT, 0, 0)))
    for family in REFUSED_FAMILIES:
        code.append((None, (JUMP_EQUAL, int(family), "refuse", 0)))
    code.append((None, (RETURN, ALLOW, 0, 0)))
    code.append(("refuse", (RETURN, REFUSE, 0, 0)))
    return code


def assemble(code: list[tuple[str | None, Instruction]]) -> bytes:
    """Labels resolved to BPF's relative jumps (from the next instruction), packed."""
    where = {label: index for index, (label, _) in enumerate(code) if label is not None}
    packed = []
    for index, (_, (op, k, true, false)) in enumerate(code):
        offsets = [where[t] - index - 1 if isinstance(t, str) else t for t in (true, false)]
        assert all(0 <= offset <= 255 for offset in offsets), offsets
        packed.append(struct.pack("=HBBI", op, offsets[0], offsets[1], k))
    return b"".join(packed)
