"""Faults of the parts acdc stands on, each as one line that names the cause and what to do.

A full disk, a disk that fails (EIO) or turns read-only (EROFS), a database out of reach
(PostgreSQL stopped, its connection lost), a channel layer out of reach (Redis killed) and
a SQLite file damaged under acdc (random bytes over its pages) are not acdc's bugs: met
anywhere in a turn, an apply, a commit, an upload or a panel, `fault_of` finds the cause
in the exception (or in what it was raised from) and gives a `Fault`, whose `line` is what
the page shows and the log prints, once, with no traceback. Anything else is None: a bug,
left to its traceback. The caller decides what comes next (the turn ends as an error with
the line as its reason, an apply writes nothing, a tab is told and reconnects); a page
whose view met one answers 503 with the line (`FaultMiddleware`), so the server goes on
serving. A SQLite database that is locked is `history.dbfaults`' case, which names the
program holding it. Non-goals: retrying (the turn host stores a kept ending once storage
is back, `chat.live.outages`), and releasing what the fault left held.
"""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from django.utils.html import escape

from history import dbfaults

log = logging.getLogger(__name__)
DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})
SQLITE_FULL = ("database or disk is full",)
SQLITE_IO = ("disk i/o error",)
FULL_BELOW = 256 * 1024  # bytes free under which a SQLite I/O error is taken for a full disk
SQLITE_READ_ONLY = ("attempt to write a readonly database",)
POSTGRES_FULL = ("no space left on device", "could not extend file")
# The words of a PostgreSQL server out of reach or gone mid-connection (psycopg's own).
POSTGRES_GONE = ("connect", "connection", "server closed", "terminating", "shutting down")
# The channel layer's client library (channels_redis speaks through redis-py).
REDIS_MODULES = ("redis.", "channels_redis.")


@dataclass(frozen=True)
class Fault:
    """One cause: `kind` is disk-full, disk-failed, read-only, damaged, database or redis."""

    kind: str
    where: str = ""  # the folder, file or server it happened on
    detail: str = ""  # the library's own words, one line

    def line(self, then: str = "send again") -> str:
        """The sentence for the page and the log; `then` is what to do once fixed."""
        where = self.where
        if self.kind == "disk-full":
            return f"The disk is full: free space on {where} and {then}."
        if self.kind == "disk-failed":
            return f"The disk failed to read or write {where} (an I/O error): check it and {then}."
        if self.kind == "read-only":
            return f"{where} became read-only: make it writable and {then}."
        if self.kind == "damaged":  # `then` waits for a new start: the file is replaced
            return dbfaults.damaged_while_serving(Path(where), self.detail)
        if self.kind == "database":
            return (
                f"The database is unreachable ({self.detail}): start it again (or check "
                f"DATABASE_URL) and {then}."
            )
        return (
            f"The live channel (Redis) is unreachable ({self.detail}): start Redis again (or "
            "check REDIS_URL); the page reconnects when it is back."
        )


def fault_of(exc: BaseException | None) -> Fault | None:
    """The outside cause of `exc` (or of an exception it was raised from), or None."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        found = _one(exc)
        if found is not None:
            return found
        exc = exc.__cause__ or exc.__context__
    return None


def is_fault(exc: BaseException | None) -> bool:
    return fault_of(exc) is not None


def _one(exc: BaseException) -> Fault | None:
    if _from_redis(exc):  # redis-py says the address, then the same again at length
        return Fault("redis", detail=_first_line(exc).split(". ")[0].rstrip("."))
    if isinstance(exc, OSError):
        return _os(exc)
    if isinstance(exc, sqlite3.DatabaseError):
        return _sqlite(exc)
    if dbfaults.is_damaged(exc) and dbfaults.sqlite_path() is not None:
        return Fault("damaged", str(dbfaults.sqlite_path()), _first_line(exc))
    if type(exc).__module__.startswith("psycopg"):
        return _postgres(exc)
    if isinstance(exc, DatabaseError) and exc.__cause__ is None:  # Django's own words
        return _sqlite(exc) if dbfaults.sqlite_path() is not None else _postgres(exc)
    return None  # Django's wrapper of a driver's error: the chain reaches the driver's


def _from_redis(exc: BaseException) -> bool:
    return any(kind.__module__.startswith(REDIS_MODULES) for kind in type(exc).__mro__)


def _os(exc: OSError) -> Fault | None:
    where = str(Path(exc.filename).parent) if exc.filename else "the disk"
    if exc.errno in DISK_FULL:
        return Fault("disk-full", where)
    if exc.errno == errno.EIO:
        return Fault("disk-failed", str(exc.filename or "the disk"))
    if exc.errno == errno.EROFS:
        return Fault("read-only", where)
    return None


def _sqlite(exc: BaseException) -> Fault | None:
    text, path = str(exc).lower(), dbfaults.sqlite_path()
    folder = str(path.parent) if path is not None else "the data folder"
    if any(words in text for words in SQLITE_FULL):
        return Fault("disk-full", folder)
    if any(words in text for words in SQLITE_IO):  # SQLite says so of some full-disk writes
        return Fault("disk-full" if _full(folder) else "disk-failed", str(path or folder))
    if any(words in text for words in SQLITE_READ_ONLY):
        return Fault("read-only", str(path or folder))
    if path is not None and dbfaults.is_damaged(exc):
        return Fault("damaged", str(path), _first_line(exc))
    return None


def _full(folder: str) -> bool:
    """Whether the file system of `folder` has (next to) no space left for SQLite to write
    its log and its shared-memory file: SQLite reports some of those refusals as I/O errors."""
    try:
        found = os.statvfs(folder)
    except OSError:
        return False
    return found.f_bavail * found.f_frsize < FULL_BELOW


def _postgres(exc: BaseException) -> Fault | None:
    text = str(exc).lower()
    if any(words in text for words in POSTGRES_FULL):
        return Fault("disk-full", "the database server")
    kinds = {kind.__name__ for kind in type(exc).__mro__}  # Django's or psycopg's classes
    lost = bool(kinds & {"OperationalError", "InterfaceError"})
    if lost and any(words in text for words in POSTGRES_GONE):
        return Fault("database", detail=_first_line(exc))
    return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:200]


class FaultMiddleware:
    """A view that met a fault outside acdc answers 503 with its line (the page shows it,
    the log has it once, with no traceback); any other exception is left to Django."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        fault = fault_of(exc)
        if fault is None:
            return None
        line = fault.line("reload the page")
        log.warning("%s %s: %s", request.method, request.path, line)
        html = f'<p class="error" role="alert">{escape(line)}</p>'
        response = HttpResponse(html, status=503, headers={"Retry-After": "5"})
        response._has_been_logged = True  # said above in one line: not again by django.request
        return response
