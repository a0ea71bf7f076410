"""Which process holds something: this process's name for leases and claims, and whether
the process behind such a name is gone.

A name is `host:pid:process` (`process` is random per process, so a later process given a
dead one's pid is told apart); `gone` says a name's process has ended, as far as this
machine can tell: only a process of this machine can be known gone, others hold until their
lease or claim expires. Non-goals: what is held (sessions' turns, edits' claims).
"""

from __future__ import annotations

import os
import socket
import uuid

HOST, PID, PROCESS = socket.gethostname(), os.getpid(), uuid.uuid4().hex[:8]
WORKER = f"{HOST}:{PID}"


def name() -> str:
    return f"{WORKER}:{PROCESS}"


def gone(held_by: str) -> bool:
    """Whether the process `held_by` names (`host:pid[:process…]`) has ended."""
    host, pid, process = (held_by.split(":") + ["", "", ""])[:3]
    if host != HOST or not pid.isdigit():
        return False
    if int(pid) == PID:
        return bool(process) and len(process) == len(PROCESS) and process != PROCESS
    return not alive(int(pid))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        pass
    return True
