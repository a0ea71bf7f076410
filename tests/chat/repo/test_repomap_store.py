"""The map's symbols on disk: a restart parses only what changed; a bad cache costs a parse."""

from __future__ import annotations

import logging
import os
import sqlite3

import pytest

from chat.llm.environment import configure_offline_environment
from chat.repo.repomap.builder import RepoMaps
from chat.repo.repomap.store import FILE_NAME, SymbolStore
from contextcore.tokens import TokenCounter
from tests.chat.repo.polyglot import FILES

configure_offline_environment()
COUNTER = TokenCounter()


@pytest.fixture
def repo_files():
    return FILES


@pytest.fixture
def repo_is_git():
    return True


@pytest.fixture
def cache(tmp_path):
    return tmp_path / "data" / FILE_NAME


def start(cache, workers=1):
    """A new server's map: nothing in memory, the store on disk."""
    cache.parent.mkdir(exist_ok=True)
    return RepoMaps(workers=workers, store=SymbolStore(cache))


def build(root, maps):
    return maps.build(root, budget=4000, count=COUNTER.count_text)


def test_a_restart_with_nothing_changed_parses_nothing(root, cache):
    first = build(root, start(cache))

    again = build(root, start(cache))

    assert first.parsed > 5
    assert again.parsed == 0
    assert again.main == first.main


def test_a_file_changed_while_stopped_is_the_only_one_parsed_again(root, cache):
    build(root, start(cache))
    path = root / "py/shapes.py"
    path.write_text(FILES["py/shapes.py"] + "\ndef added_while_stopped() -> int: ...\n")
    os.utime(path, ns=(1, 1))

    again = build(root, start(cache))

    assert again.parsed == 1
    assert "def added_while_stopped() -> int" in again.main


def test_a_touched_file_is_hashed_not_parsed(root, cache):
    build(root, start(cache))
    os.utime(root / "py/shapes.py", ns=(2, 2))

    assert build(root, start(cache)).parsed == 0


def test_a_corrupt_cache_is_put_aside_with_a_log_line(root, cache, caplog):
    first = build(root, start(cache))
    cache.write_bytes(b"not a database" * 100)
    for journal in ("-wal", "-shm"):
        (cache.parent / (FILE_NAME + journal)).unlink(missing_ok=True)

    with caplog.at_level(logging.WARNING, logger="chat.repo.repomap.store"):
        again = build(root, start(cache))

    assert again.parsed == first.parsed
    assert again.main == first.main
    assert "symbol cache" in caplog.text and "unreadable" in caplog.text
    assert build(root, start(cache)).parsed == 0  # written afresh


def test_a_row_of_another_shape_is_survived(root, cache, caplog):
    first = build(root, start(cache))
    with sqlite3.connect(cache) as db:
        db.execute("UPDATE symbols SET body = '[\"python\", 7]'")
    db.close()

    with caplog.at_level(logging.WARNING, logger="chat.repo.repomap.store"):
        again = build(root, start(cache))

    assert again.parsed == first.parsed
    assert "unreadable" in caplog.text


def test_symbols_of_another_parser_are_dropped(root, cache):
    first = build(root, start(cache))
    with sqlite3.connect(cache) as db:
        db.execute("UPDATE meta SET value = 'an older parser' WHERE key = 'fingerprint'")
    db.close()

    assert build(root, start(cache)).parsed == first.parsed
    assert build(root, start(cache)).parsed == 0


def test_symbols_parsed_in_worker_processes_are_stored_too(root, cache, monkeypatch):
    from chat.repo.repomap import parallel

    monkeypatch.setattr(parallel.Parsing, "chunk", 2)
    first = start(cache, workers=2)
    built = build(root, first)

    again = build(root, start(cache))

    assert first.workers == 2 and built.parsed > 4
    assert again.parsed == 0


def test_a_start_forgets_files_deleted_while_stopped_and_old_versions(root, cache):
    maps = start(cache)
    build(root, maps)
    (root / "py/shapes.py").write_text("def edited() -> None: ...\n")
    os.utime(root / "py/shapes.py", ns=(3, 3))
    build(root, maps)  # the old version's symbols stay until a start prunes them
    (root / "py/main.py").unlink()

    start(cache).warm_in_background(root).join()

    with sqlite3.connect(cache) as db:
        paths = {path for (path,) in db.execute("SELECT path FROM stamps")}
        orphans = db.execute(
            "SELECT count(*) FROM symbols WHERE sha256 NOT IN (SELECT sha256 FROM stamps)"
        ).fetchone()[0]
    db.close()
    assert "py/shapes.py" in paths and "py/main.py" not in paths
    assert orphans == 0


def test_a_file_replaced_keeping_its_size_and_mtime_is_parsed_again(root, cache):
    path = root / "py/shapes.py"
    build(root, start(cache))
    before = path.stat()
    text = FILES["py/shapes.py"]
    path.write_text(text.replace("make_square", "make_circle"))  # same length
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # as `cp -p` or rsync -t

    again = build(root, start(cache))

    assert path.stat().st_size == before.st_size
    assert again.parsed == 1
    assert "make_circle" in again.main


def test_a_cache_of_another_format_is_replaced_not_misread(root, cache):
    cache.parent.mkdir()
    with sqlite3.connect(cache) as db:
        db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.execute("INSERT INTO meta VALUES ('fingerprint', 'format 0')")
        db.execute("CREATE TABLE stamps (root TEXT, path TEXT, sha256 TEXT)")
    db.close()

    first = build(root, start(cache))

    assert first.parsed > 5
    assert build(root, start(cache)).parsed == 0


def test_a_restart_holds_one_copy_of_each_name_not_one_per_file(root, cache):
    # The rows are decoded into shared strings: a name used by many files (`self`, `get`)
    # is held once, as the parsed map holds it, not once per row that names it.
    build(root, start(cache))

    symbols, parsed = start(cache).symbols(root)

    first: dict[str, str] = {}
    names = [
        name
        for found in symbols.values()
        for name in (*(w for w, _ in found.references), *(d.name for d in found.definitions))
    ]
    repeated = [name for name in names if first.setdefault(name, name) is not name]
    assert parsed == 0
    assert len(names) - len(first) > 10  # names used by more than one file
    assert repeated == []
