"""The data folder is its owner's alone: 0700, and the database, SQLite's -wal and -shm
beside it, the secret key, the access token and the run file 0600, on a real `acdc serve`
that writes, even under the loosest umask and when an older acdc left them readable by
every local user."""

from __future__ import annotations

import os
import signal
import sqlite3
import stat
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from acdc.datadir import prepare_data_dir
from bench.live_server import Worker, _wait_until_serving, free_port, interruptible
from tests.test_serve_startup import _environ


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def loose_server(environ: dict[str, str], log: Path) -> Worker:
    """`acdc serve` under the loosest umask, so only acdc's own modes keep others out."""

    def loosest() -> None:
        interruptible()
        os.umask(0)

    port = free_port()
    with log.open("a") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "acdc", "serve", "--port", str(port)],
            env=environ,
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=loosest,
        )
    worker = Worker(process, port, log)
    _wait_until_serving(worker)
    return worker


def older_acdc_s(data: Path) -> sqlite3.Connection:
    """A data folder as an older acdc left it, readable by all, its database still open
    (so its -wal and -shm are there too)."""
    data.mkdir(mode=0o755)
    data.chmod(0o755)
    (data / "secret_key").write_text("a-key-an-older-acdc-left-readable")
    (data / "secret_key").chmod(0o644)
    older = sqlite3.connect(data / "acdc.sqlite3")
    older.execute("PRAGMA journal_mode=WAL")
    older.execute("CREATE TABLE kept (x)")
    older.execute("INSERT INTO kept VALUES (1)")
    older.commit()
    for name in ("acdc.sqlite3", "acdc.sqlite3-wal", "acdc.sqlite3-shm"):
        (data / name).chmod(0o644)
    return older


@pytest.mark.parametrize("folder", ["new", "left loose by an older acdc"])
def test_a_served_data_folder_and_its_files_are_the_owner_s_only(root, tmp_path, folder):
    data = tmp_path / "data"
    older = older_acdc_s(data) if folder != "new" else None
    environ = _environ(root, data)
    environ.pop("SECRET_KEY", None)  # made and kept in the data folder, as by default
    server = loose_server(environ, tmp_path / "serve.log")
    try:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        opener.addheaders = [("Authorization", f"Bearer {server.token}")]
        with opener.open(server.url) as page:  # the front page makes a session: a write
            assert page.status == 200
        modes = {p.name: mode(p) for p in data.iterdir() if not p.name.startswith("symbols.")}
    finally:
        server.process.send_signal(signal.SIGINT)
        server.process.wait(timeout=60)
        if older:
            older.close()

    assert mode(data) == 0o700
    assert modes == {
        "acdc.sqlite3": 0o600,
        "acdc.sqlite3-wal": 0o600,
        "acdc.sqlite3-shm": 0o600,
        "secret_key": 0o600,
        "token": 0o600,
        "server.json": 0o600,
        "tool-tokens.json": 0o600,  # the tools' token count, kept for a restart
    }


def test_a_new_data_folder_is_made_private_and_a_loose_one_is_closed(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    previous = os.umask(0)
    try:
        fresh = prepare_data_dir(repo, tmp_path / "fresh")
        loose = tmp_path / "loose"
        loose.mkdir(mode=0o777)
        for name in ("acdc.sqlite3-journal", "symbols.sqlite3", "server.json", "notes.txt"):
            (loose / name).write_text("x")
            (loose / name).chmod(0o666)
        outside = tmp_path / "elsewhere"
        outside.write_text("not acdc's")
        outside.chmod(0o644)
        (loose / "secret_key").symlink_to(outside)
        prepare_data_dir(repo, loose)
    finally:
        os.umask(previous)

    assert mode(fresh) == 0o700 and mode(loose) == 0o700
    assert {p.name: mode(p) for p in loose.iterdir() if not p.is_symlink()} == {
        "acdc.sqlite3-journal": 0o600,
        "symbols.sqlite3": 0o600,
        "server.json": 0o600,
        "notes.txt": 0o666,  # not acdc's: left as it is
    }
    assert mode(outside) == 0o644  # a symlink is never followed


@pytest.mark.parametrize("where", ["the repository", "its parent"])
def test_a_data_folder_that_holds_the_repository_keeps_its_mode(tmp_path, where):
    repo = tmp_path / "repo"
    repo.mkdir()
    data = repo if where == "the repository" else tmp_path
    data.chmod(0o755)

    prepare_data_dir(repo, data)

    assert mode(data) == 0o755
