"""Start-up faults of the database and the data folder: one line each, what and what to do.

Each fault is made for real and `acdc` is run as a user runs it (a separate process, on the
embedded SQLite whatever the suite's database): a file of garbage, a truncated database, an
empty one with and without a write-ahead log beside it, a lock held by another process,
PostgreSQL out of reach. A read-only data folder is a read-only bind mount in a mount
namespace of its own (`unshare -m`) when the tests run as root, whom permissions do not
stop, and a folder without write permission otherwise.
"""

from __future__ import annotations

import logging
import os
import random
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper

from bench.live_server import free_port
from chat.repo.passes import Passes
from history import dbfaults
from tests.chat.live.test_locked_database import Holder

TIMEOUT = 120


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    return folder


def acdc(root: Path, data: Path, *args: str, wrap: list[str] = (), **env: str):
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ACDC_")}
    for name in ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "SECRET_KEY"):
        environ.pop(name, None)
    environ.update(ACDC_REPO=str(root), ACDC_DATA_DIR=str(data), ACDC_MODEL="acdc/fake", **env)
    command = [*wrap, sys.executable, "-m", "acdc", *args]
    return subprocess.run(command, capture_output=True, text=True, env=environ, timeout=TIMEOUT)


def one_error_line(result) -> str:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("acdc: error: ")
    return lines[0].removeprefix("acdc: error: ")


def made_database(root: Path, data: Path) -> Path:
    """A real acdc database, migrated (the export of no session fails after migrating)."""
    acdc(root, data, "export", "sess_none")
    return data / "acdc.sqlite3"


def test_a_file_that_is_not_a_database_is_named_with_a_way_out(root, data):
    (data / "acdc.sqlite3").write_bytes(b"not a database at all\n" * 300)
    line = one_error_line(acdc(root, data, "export", "sess_none"))
    path = data / "acdc.sqlite3"
    assert line.startswith(f"the database {path} is damaged (file is not a database); ")
    assert "restore it from a backup" in line
    assert f"mkdir {data / 'damaged'} && mv {path}* {data / 'damaged'}/" in line
    assert (data / "acdc.sqlite3").read_bytes() == b"not a database at all\n" * 300


def test_a_truncated_database_is_damaged_and_never_replaced(root, data):
    path = made_database(root, data)
    with path.open("r+b") as file:
        file.truncate(8192)
    line = one_error_line(acdc(root, data, "export", "sess_none"))
    assert line.startswith(f"the database {path} is damaged (database disk image is malformed)")
    assert path.stat().st_size == 8192


def test_an_empty_database_file_is_used_and_said(root, data):
    (data / "acdc.sqlite3").touch()
    history = data / "history.jsonl"
    history.write_text("")
    result = acdc(root, data, "import-history", str(history))
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[0] == (
        f"acdc: warning: the database {data / 'acdc.sqlite3'} was an empty file (0 bytes): "
        "starting a new history in it"
    )
    assert (data / "acdc.sqlite3").stat().st_size > 0


def test_an_empty_database_beside_a_write_ahead_log_is_refused_and_left_alone(root, data):
    path = made_database(root, data)
    wal = data / "acdc.sqlite3-wal"
    wal.write_bytes(b"frames of sessions not yet checkpointed" * 100)
    path.write_bytes(b"")
    line = one_error_line(acdc(root, data, "export", "sess_none"))
    assert line == (
        f"the database {path} is empty (0 bytes) but its write-ahead log {wal} holds "
        "3,900 bytes, which SQLite would delete on opening it; restore the database from a "
        "backup, or move the log aside to start a new history"
    )
    assert wal.stat().st_size == 3900 and path.stat().st_size == 0


def test_a_database_locked_by_another_process_names_it_after_a_bounded_wait(root, data):
    path = made_database(root, data)
    holder = Holder(path)
    try:
        result = acdc(root, data, "chat", "--new", "hi", ACDC_DB_LOCK_SECONDS="1")
    finally:
        holder.release()
    assert one_error_line(result) == (
        f"the database {path} is locked by another program (pid {holder.pid}, python) and "
        "stayed locked for 1 s; end that program (or its open transaction) and start acdc again"
    )


def _read_only(folder: Path) -> list[str]:
    """The command prefix that runs a program with `folder` read-only."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        return []
    assert shutil.which("unshare"), "read-only tests as root need unshare (util-linux)"
    mount = f'mount --bind -o ro {folder} {folder} && exec "$@"'
    return ["unshare", "-m", "sh", "-c", mount, "sh"]


def test_an_empty_read_only_data_folder_is_named(root, data):
    line = one_error_line(acdc(root, data, "export", "sess_none", wrap=_read_only(data)))
    why = "Read-only file system" if os.geteuid() == 0 else "Permission denied"
    assert line == (
        f"cannot write in {data} ({why}): acdc keeps its data there; make that folder "
        "writable, or set ACDC_DATA_DIR to a folder that is"
    )


def test_a_read_only_data_folder_holding_a_database_is_named(root, data):
    made_database(root, data)
    line = one_error_line(acdc(root, data, "export", "sess_none", wrap=_read_only(data)))
    why = "a read-only file system" if os.geteuid() == 0 else "no permission"
    assert line == (
        f"the data folder {data} is not writable ({why}): acdc keeps its database there "
        "and SQLite writes files beside it; make it writable, or set ACDC_DATA_DIR to a "
        "folder that is"
    )


def test_postgresql_out_of_reach_is_one_line(root, data):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"postgres://acdc@127.0.0.1:{port}/acdc"
    line = one_error_line(acdc(root, data, "export", "sess_none", DATABASE_URL=url))
    assert line.startswith("cannot use the PostgreSQL database of DATABASE_URL (")
    assert "Connection refused" in line
    assert line.endswith("is the server running, and is DATABASE_URL right?")


def test_serve_says_the_fault_in_one_line_before_any_serving_line(root, data):
    (data / "acdc.sqlite3").write_bytes(b"\0garbage" * 1000)
    result = acdc(root, data, "serve", "--port", str(free_port()))
    assert one_error_line(result).startswith(f"the database {data / 'acdc.sqlite3'} is damaged")
    assert "serving" not in result.stdout


@pytest.fixture
def own_database(root, data, django_db_blocker) -> Iterator[BaseDatabaseWrapper]:
    """A connection to a real acdc database (migrated by `acdc`) with rows enough that its
    middle pages hold data (the kept token counts), opened as acdc.settings opens it."""
    given = {"ENGINE": "django.db.backends.sqlite3", "NAME": str(made_database(root, data))}
    given["OPTIONS"] = {"init_command": "PRAGMA journal_mode=WAL;"}
    connections.settings["own"] = connections.configure_settings({"default": given})["default"]
    with django_db_blocker.unblock():
        database = connections["own"]
        with database.cursor() as cursor:
            rows = [(f"{n:064x}", "cl100k_base", n) for n in range(5000)]
            sql = "INSERT INTO chat_tokencount (sha256, encoding, tokens) VALUES (%s, %s, %s)"
            cursor.executemany(sql, rows)
        try:
            yield database
        finally:
            database.close()
            del connections["own"]
            del connections.settings["own"]


def test_random_bytes_over_middle_pages_are_one_line_at_start(own_database):
    path = Path(own_database.settings_dict["NAME"])
    dbfaults.check_integrity(own_database)  # healthy: no word
    own_database.close()
    healthy = path.read_bytes()
    size, page = len(healthy), 512
    for middle in ((0.3, 0.4), (0.5, 0.6), (0.7, 0.8)):
        first, last = (int(size * share) // page for share in middle)
        damaged = bytearray(healthy)
        for number in range(first, last):
            damaged[number * page : (number + 1) * page] = random.Random(number).randbytes(page)
        path.write_bytes(damaged)

        with pytest.raises(dbfaults.DatabaseFault) as fault:
            dbfaults.check_integrity(own_database)

        line = str(fault.value)
        assert "\n" not in line and "Traceback" not in line
        assert line.startswith(f"the database {path} is damaged ("), middle
        aside = path.parent / "damaged" / path.name
        assert f"sqlite3 {aside} .recover | sqlite3 {path} before starting acdc" in line


@pytest.mark.sqlite_file
def test_a_damaged_page_met_while_serving_is_one_line_in_the_log(own_database, root, caplog):
    path = Path(own_database.settings_dict["NAME"])
    own_database.close()
    damaged = bytearray(path.read_bytes())
    middle = len(damaged) // 2 // 512 * 512
    damaged[middle : middle + 64 * 512] = random.Random(7).randbytes(64 * 512)
    path.write_bytes(damaged)

    def count_all() -> None:  # as the Files panel's pass reads the kept counts
        with connections["own"].cursor() as cursor:
            cursor.execute("SELECT sum(tokens), count(*) FROM chat_tokencount")

    passes = Passes()
    with caplog.at_level(logging.INFO):
        assert passes.start("count", root, count_all)
        passes.wait(60)

    assert [r for r in caplog.records if r.exc_info] == [], caplog.text
    (line,) = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert line.startswith("the count pass stopped: the database ")
    assert "is damaged (database disk image is malformed); restore it from a backup" in line
