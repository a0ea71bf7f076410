"""Start-up faults of the database and the data folder: one line each, what and what to do.

Each fault is made for real and `acdc` is run as a user runs it (a separate process, on the
embedded SQLite whatever the suite's database): a file of garbage, a truncated database, an
empty one with and without a write-ahead log beside it, a lock held by another process,
PostgreSQL out of reach. A read-only data folder is a read-only bind mount in a mount
namespace of its own (`unshare -m`) when the tests run as root, whom permissions do not
stop, and a folder without write permission otherwise.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from bench.turn_server import free_port
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
