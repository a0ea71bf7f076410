"""A PostgreSQL stopped under acdc, for real: a server the test makes (initdb, as the
`postgres` user: initdb refuses root) and starts on a free port, then stops. What a turn,
an apply or a panel meets then (the query on a connection the server ended, and the
connect to a server that is gone) is one line naming the database, never the server
stopping ("The server stopped…" is for acdc's own worker). The turn host's handling of
the line is the same as for a full disk (test_disk_full.py)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import psycopg
import pytest
from django.db import OperationalError

from chat.turn.faults import fault_of

BIN = Path(shutil.which("pg_ctl") or "/usr/lib/postgresql/bin/pg_ctl").parent


def _as_postgres(*command: str, check: bool = True) -> None:
    # No pipes: the server pg_ctl starts would hold them open, and the run would not end.
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    subprocess.run(["su", "postgres", "-c", " ".join(command)], check=check, **quiet)


@pytest.fixture
def postgres():
    # Outside the test's tmp_path: the postgres user cannot enter root's private folder.
    folder = Path(tempfile.mkdtemp(prefix="acdc-test-pg-"))
    shutil.chown(folder, "postgres")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    data = folder / "data"
    _as_postgres(f"{BIN}/initdb", "-D", str(data), "-A", "trust", "-U", "postgres")
    options = f"'-p {port} -k {folder} -c listen_addresses=127.0.0.1'"
    log = folder / "server.log"
    _as_postgres(f"{BIN}/pg_ctl", "-D", str(data), "-l", str(log), "-o", options, "-w", "start")
    yield port, data
    _as_postgres(f"{BIN}/pg_ctl", "-D", str(data), "-m", "immediate", "stop", check=False)
    shutil.rmtree(folder)


def _django_wrapped(error: psycopg.Error) -> OperationalError:
    """As Django's database wrapper raises a driver's error: its own class, from it."""
    try:
        raise OperationalError(*error.args) from error
    except OperationalError as wrapped:
        return wrapped


def test_a_stopped_postgres_is_one_line_naming_the_database(postgres):
    port, data = postgres
    address = f"host=127.0.0.1 port={port} user=postgres dbname=postgres"
    connection = psycopg.connect(address, autocommit=True)
    assert connection.execute("select 1").fetchone() == (1,)
    _as_postgres(f"{BIN}/pg_ctl", "-D", str(data), "-m", "fast", "-w", "stop")
    with pytest.raises(psycopg.Error) as lost:
        connection.execute("select 1")
    with pytest.raises(psycopg.OperationalError) as refused:
        psycopg.connect(address)
    for error in (lost.value, refused.value):
        fault = fault_of(_django_wrapped(error))
        assert fault is not None and fault.kind == "database", error
        line = fault.line()
        assert line.startswith("The database is unreachable (") and "server stopped" not in line
        assert line.endswith("start it again (or check DATABASE_URL) and send again.")
