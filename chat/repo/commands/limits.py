"""Limits on one run: how many processes, how much memory, the largest file it writes.

A run gets a cgroup of its own (`RunGroup`) where acdc can make one as a child of its own
group (`pids`, `memory`; v1 or v2, on v2 only where the controllers are already delegated):
made for the run, emptied and removed after it. acdc never writes to a group it did not
make. Without one, memory falls back to `RLIMIT_AS` and processes to `RLIMIT_NPROC`, which
binds no root (there is then no process limit); a file is always `RLIMIT_FSIZE`. The child
sets its rlimits and joins the group between fork and exec. `stopped_by` names the limit
that ended a run; `held_here` says which limits hold on this machine and how.
Non-goals: the timeout and the output's caps (`runner`, `output`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import secrets
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from django.conf import settings

from chat.repo.commands.output import STORED_BYTES, TAIL_BYTES, Captured

PROC = Path("/proc")
PREFIX = "acdc-run-"
EMPTY_WAIT_SECONDS = 5.0
SETTINGS = MappingProxyType(
    {
        "processes": "ACDC_RUN_MAX_PROCESSES",
        "memory": "ACDC_RUN_MEMORY_MB",
        "file": "ACDC_RUN_FILE_MB",
        "tmp": "ACDC_RUN_TMP_MB",
    }
)
# Free room on the work tree's disk above which its ENOSPC cannot be the disk's: the run
# filled one of its capped private folders (/tmp, /dev/shm, its home).
DISK_ROOM_BYTES = 64 * 1024 * 1024
MB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    processes: int
    memory_mb: int
    file_mb: int
    tmp_mb: int = 1024

    @classmethod
    def configured(cls) -> Limits:
        return cls(
            settings.ACDC_RUN_MAX_PROCESSES,
            settings.ACDC_RUN_MEMORY_MB,
            settings.ACDC_RUN_FILE_MB,
            settings.ACDC_RUN_TMP_MB,
        )

    def said(self, limit: str) -> str:
        """'the memory limit of 4 GiB (ACDC_RUN_MEMORY_MB)'."""
        amount = {
            "processes": f"{self.processes:,}",
            "memory": size(self.memory_mb),
            "file": size(self.file_mb),
            "tmp": size(self.tmp_mb),
        }[limit]
        what = {
            "processes": "process",
            "memory": "memory",
            "file": "file size",
            "tmp": "private /tmp",
        }[limit]
        return f"the {what} limit of {amount} ({SETTINGS[limit]})"


def size(mb: int) -> str:
    return f"{mb // 1024:,} GiB" if mb % 1024 == 0 else f"{mb:,} MiB"


@dataclass(frozen=True)
class Place:
    """The folders acdc may make a run's group in, per controller, with the cgroup version
    of each (absent: no group for that controller here, and `why`)."""

    folders: tuple[tuple[str, Path, int], ...]  # (controller, parent folder, version)
    why: str = ""

    def of(self, controller: str) -> tuple[Path, int] | None:
        return next(((f, v) for c, f, v in self.folders if c == controller), None)

    @classmethod
    def found(cls, proc: Path = PROC / "self") -> Place:
        try:
            groups = (proc / "cgroup").read_text().splitlines()
            mounts = (proc / "mountinfo").read_text().splitlines()
        except OSError as exc:
            return cls((), f"cgroups cannot be read here ({exc.strerror or exc})")
        v1, v2 = _mounts(mounts)
        folders, missing = [], []
        for controller in ("pids", "memory"):
            folder = _own_folder(groups, controller, v1, v2)
            if folder is None:
                missing.append(controller)
            else:
                folders.append((controller, *folder))
        why = f"acdc cannot make a cgroup with the {' or '.join(missing)} controller here"
        return cls(tuple(folders), why if missing else "")


def _mounts(lines: list[str]) -> tuple[dict[str, tuple[str, str]], tuple[str, str] | None]:
    """cgroup v1 mounts by controller, and the cgroup2 mount: (mount root, mount point)."""
    v1: dict[str, tuple[str, str]] = {}
    v2 = None
    for line in lines:
        fields = line.split()
        if " - " not in line or len(fields) < 5:
            continue
        after = line.split(" - ", 1)[1].split()
        if len(after) < 3:
            continue
        mount = (fields[3], fields[4])
        if after[0] == "cgroup2" and v2 is None:
            v2 = mount
        elif after[0] == "cgroup":
            for option in after[2].split(","):
                v1.setdefault(option, mount)
    return v1, v2


def _own_folder(
    groups: list[str], controller: str, v1: dict, v2: tuple[str, str] | None
) -> tuple[Path, int] | None:
    """The folder of acdc's own group for `controller`, when a child of it may be made
    with that controller, without changing the group itself."""
    for line in groups:
        _, names, path = line.split(":", 2)
        if controller in names.split(",") and controller in v1:
            folder = _under(v1[controller], path)
            if folder is not None and os.access(folder, os.W_OK):
                return folder, 1
        if names == "" and v2 is not None:
            folder = _under(v2, path)
            if folder is not None and os.access(folder, os.W_OK) and _delegates(folder, controller):
                return folder, 2
    return None


def _under(mount: tuple[str, str], path: str) -> Path | None:
    root, point = mount
    if path != root and not path.startswith(root.rstrip("/") + "/"):
        return None
    return Path(point, path[len(root) :].lstrip("/"))


def _delegates(folder: Path, controller: str) -> bool:
    try:
        return controller in (folder / "cgroup.subtree_control").read_text().split()
    except OSError:
        return False


class RunGroup:
    """One run's cgroup folders (one per controller, or one for both on v2): made by
    `opened`, emptied and removed by `close`, whose counters `stopped_by` reads; and the
    rlimits of the child, with those of what has no group."""

    def __init__(self, limits: Limits, place: Place | None = None) -> None:
        self.limits = limits
        self.place = Place.found() if place is None else place
        self.made: dict[str, tuple[Path, int]] = {}  # controller: (group folder, version)
        self.fired: set[str] = set()  # the controllers whose limit was hit, read at close
        self.why = self.place.why

    async def opened(self) -> RunGroup:
        name = f"{PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
        for controller, parent, version in self.place.folders:
            _sweep(parent)
            folder = parent / name
            try:
                if not folder.is_dir():
                    folder.mkdir()
                self.made[controller] = (folder, version)
                _set_limit(folder, controller, version, self.limits)
            except OSError as exc:
                self.made.pop(controller, None)
                if folder not in self._folders():
                    with contextlib.suppress(OSError):
                        folder.rmdir()
                self.why = f"the run's {controller} cgroup could not be made ({exc.strerror})"
        return self

    async def close(self) -> None:
        """Whatever is still in the group killed, its counters read, the folders removed."""
        for folder in self._folders():
            await _emptied(folder)
        if "pids" in self.made and _count(self.made["pids"][0] / "pids.events", "max"):
            self.fired.add("pids")
        if "memory" in self.made:
            folder, version = self.made["memory"]
            events = "memory.events" if version == 2 else "memory.oom_control"
            if _count(folder / events, "oom_kill"):
                self.fired.add("memory")
        for folder in self._folders():
            with contextlib.suppress(OSError):
                folder.rmdir()

    def _folders(self) -> set[Path]:
        return {folder for folder, _ in self.made.values()}

    def preexec(self) -> Callable[[], None]:
        """What the child does between fork and exec: its rlimits, then into the group.
        Where that fails it says why and exits: a run never starts unbounded."""
        rlimits = [(resource.RLIMIT_FSIZE, self.limits.file_mb * MB)]
        if "memory" not in self.made:
            rlimits.append((resource.RLIMIT_AS, self.limits.memory_mb * MB))
        if "pids" not in self.made and os.getuid() != 0:  # root: the kernel does not count
            rlimits.append((resource.RLIMIT_NPROC, _tasks_of(os.getuid()) + self.limits.processes))
        joins = [str(folder / "cgroup.procs") for folder in self._folders()]

        def in_child() -> None:
            try:
                for which, value in rlimits:
                    resource.setrlimit(which, (value, value))
                for path in joins:
                    fd = os.open(path, os.O_WRONLY)
                    try:
                        os.write(fd, b"0")
                    finally:
                        os.close(fd)
            except OSError as exc:
                os.write(2, f"acdc: the run's limits could not be set: {exc}\n".encode())
                os._exit(126)

        return in_child

    def stopped_by(
        self, ending: str, exit_code: int | None, captured: Captured, root: Path | None = None
    ) -> str:
        """The limit a run that failed passed, said as a sentence (and added to its
        output), or "" when none did. An ENOSPC while the work tree's disk (`root`) has
        room was a full private /tmp (or /dev/shm, or home: they share the cap)."""
        if ending != "exited" or exit_code == 0:
            return ""
        tail = captured.last(TAIL_BYTES)
        said = ""
        if "pids" in self.fired:
            said = f"it reached {self.limits.said('processes')}: a new process was refused"
        elif "memory" in self.fired:
            said = f"it passed {self.limits.said('memory')} and was killed"
        elif "memory" not in self.made and (b"MemoryError" in tail or b"Cannot allocate" in tail):
            said = f"it passed {self.limits.said('memory')} (RLIMIT_AS): an allocation failed"
        elif exit_code in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ) or any(
            words in tail for words in (b"File too large", b"File size limit exceeded")
        ):  # killed by SIGXFSZ (bubblewrap and a shell say 128 + it), or EFBIG said
            said = f"it passed {self.limits.said('file')}: a write was refused"
        elif b"No space left on device" in tail and root is not None and _has_room(root):
            said = f"it filled {self.limits.said('tmp')} (/tmp, /dev/shm and its home each)"
        if said:
            captured.add(f"\n[acdc] stopped: {said}\n".encode())
        return said


def _has_room(root: Path) -> bool:
    try:
        found = os.statvfs(root)
    except OSError:
        return False
    return found.f_bavail * found.f_frsize > DISK_ROOM_BYTES


def _sweep(parent: Path) -> None:
    """Groups an acdc process that is gone left behind (killed, it could not remove its
    run's): removed when empty. Only acdc's own names; a group in use cannot be removed."""
    for child in parent.glob(f"{PREFIX}*"):
        pid = child.name[len(PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not (PROC / pid).exists():
            with contextlib.suppress(OSError):
                child.rmdir()


def _set_limit(folder: Path, controller: str, version: int, limits: Limits) -> None:
    if controller == "pids":
        (folder / "pids.max").write_text(str(limits.processes))
        return
    amount = str(limits.memory_mb * MB)
    if version == 2:
        (folder / "memory.max").write_text(amount)
        with contextlib.suppress(OSError):  # no swap accounting: nothing to bound
            (folder / "memory.swap.max").write_text("0")
        return
    (folder / "memory.limit_in_bytes").write_text(amount)
    with contextlib.suppress(OSError):  # memory and swap together, where swap is counted
        (folder / "memory.memsw.limit_in_bytes").write_text(amount)


async def _emptied(folder: Path) -> None:
    """Every process still in the group killed, and waited for until the group is empty
    (a cgroup with a process in it cannot be removed)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + EMPTY_WAIT_SECONDS
    while True:
        try:
            pids = [int(p) for p in (folder / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return
        if not pids or loop.time() > deadline:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        await asyncio.sleep(0.01)


def _count(path: Path, key: str) -> int:
    """The number after `key` in a cgroup's flat-keyed file (pids.events, memory.events)."""
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


def _tasks_of(uid: int) -> int:
    """The tasks (processes and threads) `uid` has now: RLIMIT_NPROC counts them all."""
    total = 0
    for entry in os.scandir(PROC):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == uid:
                    total += len(os.listdir(entry.path + "/task"))
    return total


@dataclass(frozen=True)
class Held:
    """One limit as the page says it: how much, its setting, and how it holds here."""

    name: str
    amount: str
    setting: str
    how: str
    holds: bool = True


def held_here(limits: Limits, place: Place | None = None) -> tuple[Held, ...]:
    """The limits on a run on this machine, and by what each is enforced (or why not)."""
    place = Place.found() if place is None else place
    memory = place.of("memory")
    how = _by(memory) if memory else "RLIMIT_AS (address space reserved, not memory used)"
    held = [
        Held("Processes", f"{limits.processes:,}", SETTINGS["processes"], *_processes(place)),
        Held("Memory", size(limits.memory_mb), SETTINGS["memory"], how),
        Held("Largest file written", size(limits.file_mb), SETTINGS["file"], "RLIMIT_FSIZE"),
    ]
    if (tmp_mb := getattr(settings, "ACDC_RUN_TMP_MB", None)) is not None:
        held.append(Held("Private /tmp", size(tmp_mb), "ACDC_RUN_TMP_MB", "bubblewrap --size"))
    timeout = settings.ACDC_COMMAND_MAX_TIMEOUT
    killed = "no declaration may ask for more; at its timeout a run is killed with all it started"
    held.append(Held("Longest timeout", duration(timeout), "ACDC_COMMAND_MAX_TIMEOUT", killed))
    budget = f"{settings.ACDC_COMMAND_OUTPUT_BYTES:,} bytes to the model"
    kept = f"head and tail; acdc stores its first {STORED_BYTES:,} bytes and last {TAIL_BYTES:,}"
    held.append(Held("Output", budget, "ACDC_COMMAND_OUTPUT_BYTES", kept))
    return tuple(held)


def _processes(place: Place) -> tuple[str, bool]:
    pids = place.of("pids")
    if pids is not None:
        return _by(pids), True
    if os.getuid() != 0:
        return "RLIMIT_NPROC, counting your other processes too (no cgroup here)", True
    why = place.why or "no cgroup can be made"
    return f"not enforced: {why}, and acdc runs as root, whom RLIMIT_NPROC does not bind", False


def _by(folder: tuple[Path, int]) -> str:
    path, version = folder
    return f"a cgroup (v{version}) acdc makes for each run under {path}, removed after it"


def duration(seconds: int) -> str:
    """'1 h', '90 min', '45 s'."""
    if seconds % 3600 == 0:
        return f"{seconds // 3600} h"
    return f"{seconds // 60} min" if seconds % 60 == 0 else f"{seconds} s"
