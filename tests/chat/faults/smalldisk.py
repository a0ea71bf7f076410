"""A small file system that fills up for real: a 2 MB-headroom tmpfs the test mounts.

`SmallDisk` mounts a tmpfs (root only, as the test machine runs), can move the test's
SQLite database onto it (copied whole, the write-ahead log checkpointed first; every
connection opened afterwards, in any thread, opens the copy), `fill`s it with a file
until the kernel says ENOSPC, and `free`s it again. `close` puts the database back and
unmounts. Nothing here fakes the fault: the writes fail because the disk is full.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

from django.db import connections

HEADROOM = 2 * 1024 * 1024


class SmallDisk:
    def __init__(self, folder: Path, size: int = HEADROOM) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], check=True
        )
        self.filler = folder / "filler"
        self._database: str | None = None

    def take_database(self) -> Path:
        """The test database, from now on on this disk (the tmpfs grows by its size)."""
        size = checkpointed().stat().st_size + HEADROOM  # the log's pages in the file
        subprocess.run(["mount", "-o", f"remount,size={size}", str(self.folder)], check=True)
        copy, self._database = moved_database(self.folder)
        return copy

    def fill(self) -> None:
        """Write until the disk refuses: every byte of it is taken."""
        try:  # the close's flush of what the buffer still held may be refused too
            with self.filler.open("ab") as out:
                while True:
                    out.write(b"\0" * 65536)
                    out.flush()
        except OSError:
            pass
        for extra in range(64):  # the last partial blocks
            try:
                with (self.folder / f"filler-{extra}").open("wb") as out:
                    out.write(b"\0" * 512)
            except OSError:
                break

    def free(self) -> None:
        for path in self.folder.glob("filler*"):
            path.unlink()

    def close(self) -> None:
        if self._database is not None:
            put_back(self._database)
        subprocess.run(["umount", "-l", str(self.folder)], check=True)


def moved_database(folder: Path) -> tuple[Path, str]:
    """The test database copied into `folder` (its write-ahead log checkpointed first) and
    used from now on, by every connection opened afterwards in any thread; returns the copy
    and the original's name, for `put_back`."""
    settings = connections["default"].settings_dict
    original = checkpointed()
    copy = folder / "acdc.sqlite3"
    shutil.copyfile(original, copy)
    settings["NAME"] = str(copy)
    return copy, str(original)


def checkpointed() -> Path:
    """The test database's file, with what its write-ahead log held moved into it."""
    original = Path(connections["default"].settings_dict["NAME"])
    connections.close_all()
    with sqlite3.connect(original) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return original


def put_back(name: str) -> None:
    connections.close_all()
    connections["default"].settings_dict["NAME"] = name
