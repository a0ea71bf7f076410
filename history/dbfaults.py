"""Database faults as one line that says what happened and what to do.

`start_fault` turns what opening the database raised at start (a damaged file, a folder
or file that is not writable, a lock another program holds past the wait, PostgreSQL out
of reach) into that line; anything else is left to be a traceback, since it is a bug.
`check_integrity` runs SQLite's `PRAGMA quick_check` at start, so a page damaged anywhere
in the file is that one line before serving, not a traceback when a query first reads it;
`is_damaged` tells such a fault met later. `check_empty_database` refuses a SQLite file
emptied or gone while its write-ahead log still holds data (opening it would delete the
log), and says so when it starts a new history in an empty file. `lock_holders` names
the other processes holding the SQLite file's locks, from /proc/locks, else those with it
open (/proc/*/fd): the turn's message for a locked database uses it too. `keep_private`
keeps the SQLite files their owner's only, however they were made. Only the standard
library and Django here; it sits in history, the room that owns the database, so the
turn, the socket and the CLI all reach it.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
from pathlib import Path

from django.db import DatabaseError, OperationalError, connections

DAMAGED = (
    "file is not a database",
    "database disk image is malformed",
    "malformed database schema",
)
# SQLite's primary result codes of a damaged file: SQLITE_CORRUPT and SQLITE_NOTADB.
DAMAGED_CODES = frozenset({11, 26})
NOT_WRITABLE = ("attempt to write a readonly database", "unable to open database file")
LOCKED = ("database is locked", "database table is locked")
WRITE_REFUSED = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})


class DatabaseFault(Exception):
    """The database cannot be used as it is; `str(exc)` is the one line to show."""


def sqlite_path() -> Path | None:
    """The SQLite file in use (the test database's under the tests), or None."""
    database = connections["default"].settings_dict
    if database["ENGINE"] != "django.db.backends.sqlite3":
        return None
    return Path(database["NAME"])


def keep_private(sender, connection, **kwargs) -> None:
    """`connection_created`'s receiver: the SQLite file just opened (or made) and the
    -wal, -shm and -journal files beside it lose group and other permissions. SQLite makes
    those files later with the database file's mode, so from here on they are made private;
    a database left readable by an older acdc or a loose umask is closed on the next start."""
    name = str(connection.settings_dict.get("NAME") or "") if connection.vendor == "sqlite" else ""
    if not name or name == ":memory:" or name.startswith("file:"):
        return
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            found = os.lstat(name + suffix)
            if stat.S_ISREG(found.st_mode) and found.st_mode & 0o077:
                os.chmod(name + suffix, stat.S_IMODE(found.st_mode) & 0o700)
        except OSError:
            pass  # gone already, or not ours: the data folder (0700) still keeps it in


def lock_seconds() -> float:
    return float(connections["default"].settings_dict["OPTIONS"].get("timeout", 5))


def is_locked(exc: BaseException) -> bool:
    return isinstance(exc, OperationalError | sqlite3.OperationalError) and any(
        words in str(exc) for words in LOCKED
    )


def is_damaged(exc: BaseException | None) -> bool:
    """Whether `exc` (or what it was raised from) says the SQLite file is damaged."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        code = getattr(exc, "sqlite_errorcode", None)
        if isinstance(code, int) and code & 0xFF in DAMAGED_CODES:
            return True
        if isinstance(exc, DatabaseError | sqlite3.DatabaseError) and any(
            words in str(exc) for words in DAMAGED
        ):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def damaged_line(exc: BaseException) -> str:
    """The one line for a damaged SQLite file met while serving (the log's and stderr's)."""
    path = sqlite_path()
    return _damaged(path, _one_line(str(exc))) if path else _one_line(str(exc))


def damaged_while_serving(path: Path, detail: str) -> str:
    """The sentence for the page when a turn or a page meets the damage: the way out of
    `_damaged`, after stopping acdc (the file may not be replaced under a running server)."""
    return f"The database {path} is damaged ({_one_line(detail)}): stop acdc, then {_way_out(path)}"


def check_integrity(connection=None) -> None:
    """`PRAGMA quick_check` of the SQLite database (a DatabaseFault naming the first
    problem and the way out when it fails). It reads every page once, without the
    cross-checks of indexes against tables `integrity_check` adds: 0.13 s for 53 MB,
    0.5 s for 214 MB (docs/benchmarks.md). PostgreSQL checks its own pages; nothing to do there."""
    connection = connection or connections["default"]
    if connection.vendor != "sqlite":
        return
    path = Path(connection.settings_dict["NAME"])
    try:
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA quick_check(1)")  # (1): stop at the first problem
            found = [row[0] for row in cursor.fetchall()]
    except (DatabaseError, sqlite3.DatabaseError) as exc:
        if not is_damaged(exc):
            raise
        found = [str(exc)]
    if found != ["ok"]:
        connection.close()
        raise DatabaseFault(_damaged(path, _one_line("; ".join(found))))


def _one_line(text: str) -> str:
    return " ".join(text.split())[:300] or "?"


def start_fault(exc: BaseException) -> str | None:
    """The line for a fault of the database (or the data folder) at start, or None."""
    if isinstance(exc, OSError):  # before the settings could be read: no database yet
        return _os_fault(exc) if exc.filename else None
    path = sqlite_path()
    text = str(exc)
    if isinstance(exc, DatabaseError | sqlite3.DatabaseError) and path is not None:
        if is_damaged(exc):
            return _damaged(path, _one_line(text))
        if is_locked(exc):
            seconds = f"{lock_seconds():g}"
            return (
                f"the database {path} is {locked_by(path)} and stayed locked for {seconds} s; "
                "end that program (or its open transaction) and start acdc again"
            )
        if any(words in text for words in NOT_WRITABLE):
            return _not_writable(path)
    if isinstance(exc, OperationalError) and path is None:
        first = (text.strip().splitlines() or [type(exc).__name__])[0]
        return (
            f"cannot use the PostgreSQL database of DATABASE_URL ({first}); "
            "is the server running, and is DATABASE_URL right?"
        )
    return None


def _damaged(path: Path, detail: str) -> str:
    return f"the database {path} is damaged ({detail}); {_way_out(path)}"


def _way_out(path: Path) -> str:
    aside = path.parent / "damaged"
    return (
        f"restore it from a backup, or move it aside with its -wal and -shm files (mkdir "
        f"{aside} && mv {path}* {aside}/) and acdc starts a new, empty history; to save what "
        f"can be read, then run sqlite3 {aside / path.name} .recover | sqlite3 {path} before "
        "starting acdc"
    )


def _not_writable(path: Path) -> str:
    folder = path.parent
    if not os.access(folder, os.W_OK):
        return (
            f"the data folder {folder} is not writable ({_why_not_writable(folder)}): acdc "
            "keeps its database there and SQLite writes files beside it; make it writable, "
            "or set ACDC_DATA_DIR to a folder that is"
        )
    if path.exists() and not os.access(path, os.W_OK):
        return (
            f"the database {path} is read-only ({_why_not_writable(path)}); make it "
            "writable, or set ACDC_DATA_DIR to another folder"
        )
    return f"cannot open the database {path} for writing; check its folder's permissions"


def _os_fault(exc: OSError) -> str:
    name = Path(exc.filename)
    detail = exc.strerror or str(exc)
    if exc.errno in WRITE_REFUSED:
        return (
            f"cannot write in {name.parent} ({detail}): acdc keeps its data there; make "
            "that folder writable, or set ACDC_DATA_DIR to a folder that is"
        )
    return f"cannot use {name}: {detail}"


def _why_not_writable(path: Path) -> str:
    try:
        read_only = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    return "a read-only file system" if read_only else "no permission"


def check_empty_database() -> str:
    """Refuse (`DatabaseFault`) a SQLite file that is empty or missing while its
    write-ahead log holds data: SQLite deletes such a log on opening, and the sessions
    in it with it. Returns a warning for an empty file acdc will start a history in
    (SQLite takes 0 bytes as an empty database), else ""."""
    path = sqlite_path()
    if path is None:
        return ""
    wal = path.with_name(path.name + "-wal")
    size = path.stat().st_size if path.exists() else None
    log_size = wal.stat().st_size if wal.exists() else 0
    if not size and log_size:
        state = "missing" if size is None else "empty (0 bytes)"
        raise DatabaseFault(
            f"the database {path} is {state} but its write-ahead log {wal} holds "
            f"{log_size:,} bytes, which SQLite would delete on opening it; restore the "
            "database from a backup, or move the log aside to start a new history"
        )
    if size == 0:
        return f"the database {path} was an empty file (0 bytes): starting a new history in it"
    return ""


def locked_by(path: Path) -> str:
    """'locked by another program (pid 12, sqlite3)', naming what can be known."""
    holders = lock_holders(path)
    if not holders:
        return "locked by another program"
    named = ", ".join(f"pid {pid}, {_program(pid)}" for pid in holders[:3])
    return f"locked by another program ({named})"


def locked_turn_message(*, sent: bool) -> str:
    """For the tab whose message a lock stopped; `sent`: the message was stored."""
    path = sqlite_path()
    holder = locked_by(path) if path else "locked by another program"
    if not sent:
        return (
            f"The database is {holder}: your message was not sent and is still in the box. "
            "Send it again once that program has let go of the database."
        )
    return (
        f"The database is {holder}: your message was sent, but its reply could not be "
        "stored whole. Reload the page once that program has let go of the database."
    )


def lock_holders(path: Path) -> list[int]:
    """Other processes holding a write lock on the file or its -shm (where SQLite's WAL
    write lock lives), else any lock on them, else with the file open."""
    files = [path, path.with_name(path.name + "-shm")]
    keys = {_lock_key(file) for file in files if file.exists()}
    writers, lockers = _posix_locks(keys)
    found = writers or lockers or _opened_by(path)
    return sorted(found - {os.getpid()})


def _lock_key(file: Path) -> str:
    stat = file.stat()
    return f"{os.major(stat.st_dev):02x}:{os.minor(stat.st_dev):02x}:{stat.st_ino}"


def _posix_locks(keys: set[str]) -> tuple[set[int], set[int]]:
    writers: set[int] = set()
    lockers: set[int] = set()
    try:
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return writers, lockers
    for line in lines:
        fields = line.split()
        if "->" in fields or len(fields) < 6:  # "->": waiting for the lock, not holding it
            continue
        if fields[-3] not in keys or not fields[-4].isdigit():
            continue
        pid = int(fields[-4])
        lockers.add(pid)
        if fields[-5] == "WRITE":
            writers.add(pid)
    return writers, lockers


def _opened_by(path: Path) -> set[int]:
    target = str(path.resolve())
    found: set[int] = set()
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        try:
            if any(os.readlink(link) == target for link in fd_dir.iterdir()):
                found.add(int(fd_dir.parent.name))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


def _program(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip() or "?"
    except OSError:
        return "?"
