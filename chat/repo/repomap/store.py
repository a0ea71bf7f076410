"""The map's symbols on disk, so a restart parses only the files that changed.

One SQLite file in the data folder (`symbols.sqlite3`, beside the database, whatever the
database is) holds each parsed file's symbols keyed by the sha256 of its bytes, and each
file's last (size, mtime, ctime) stamp with that hash, so a restart with nothing changed neither
parses nor reads nor hashes a file: it stats them. The rows are valid for one parser
`fingerprint` (the symbol code, the query files, the tree-sitter version); another one
empties the file. The store is a cache: a file that cannot be read, a corrupt or foreign
one, is logged once, put aside, and the map is parsed as if there were none; a write that
fails turns the store off for the process. Never a crash. Non-goals: which files are looked
at, parsing (chat.repo.repomap.builder, .symbols).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import json
import logging
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path

from chat.repo import credentials
from chat.repo.repomap import members
from chat.repo.repomap import symbols as symbols_module
from chat.repo.repomap.symbols import QUERIES, Definition, FileSymbols

log = logging.getLogger(__name__)
FILE_NAME = "symbols.sqlite3"
FORMAT = 2  # the rows' layout; the fingerprint also covers what the parser produces
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS symbols (sha256 TEXT PRIMARY KEY, body TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS stamps (root TEXT NOT NULL, path TEXT NOT NULL, "
    "size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, ctime_ns INTEGER NOT NULL, "
    "sha256 TEXT NOT NULL, "
    "PRIMARY KEY (root, path))",
)
Stamp = tuple[int, int, int]  # (size, mtime_ns, ctime_ns): ctime, which no tool sets back
Row = tuple[str, str, Stamp, str, FileSymbols | None]  # root, path, stamp, sha256, symbols


@functools.cache
def fingerprint() -> str:
    """What the stored symbols depend on besides the file bytes: this module (the rows'
    layout), the parsing and naming code and its secret elision, the query files and
    tree-sitter's version."""
    digest = hashlib.sha256(f"format {FORMAT}\n".encode())
    sources = [Path(__file__), Path(symbols_module.__file__), Path(credentials.__file__)]
    sources.append(Path(members.__file__))  # the names it gives JavaScript's members
    for path in [*sources, *sorted(QUERIES.glob("*.scm"))]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        digest.update(importlib.metadata.version("tree-sitter").encode())
    return digest.hexdigest()


def encode(found: FileSymbols) -> str:
    definitions = [
        [d.name, d.kind, d.line, d.end_line, d.signature, d.depth, int(d.local)]
        for d in found.definitions
    ]
    return json.dumps([found.language, definitions, found.references], separators=(",", ":"))


def decode(body: str, names: dict[str, str] | None = None) -> FileSymbols:
    """The symbols of one row; ValueError (or TypeError) for a row of another shape.
    `names` holds one copy of each name and kind already decoded, which this row's take
    the place of: a restart reads every file's rows, whose words repeat across files
    (`self`, `get`, `function`), and would otherwise hold a string per use."""
    language, definitions, references = json.loads(body)
    one = (lambda word: names.setdefault(word, word)) if names is not None else str
    return FileSymbols(
        one(str(language)),
        tuple(
            Definition(one(str(n)), one(str(k)), int(a), int(b), str(s), int(d), bool(local))
            for n, k, a, b, s, d, local in definitions
        ),
        tuple((one(str(word)), int(times)) for word, times in references),
    )


class SymbolStore:
    """One process's handle on the file; every method is safe from any thread."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._off = False

    def load(self, root: str) -> tuple[dict[str, tuple[Stamp, str]], dict[str, FileSymbols]]:
        """`root`'s stamps (path -> (stamp, sha256)) and the symbols they point at; empty
        when the file is missing, of another fingerprint, or unreadable."""
        with self._lock:
            if self._off:
                return {}, {}
            try:
                return self._load(root)
            except (sqlite3.Error, ValueError, TypeError, OSError) as exc:
                log.warning(
                    "the map's symbol cache %s is unreadable (%s); parsing afresh", self.path, exc
                )
                self._put_aside()
                return {}, {}

    def _load(self, root: str) -> tuple[dict[str, tuple[Stamp, str]], dict[str, FileSymbols]]:
        if not self.path.exists():
            return {}, {}
        with self._connect() as db:
            if self._stale(db):
                return {}, {}
            stamps = {
                path: ((size, mtime, ctime), sha)
                for path, size, mtime, ctime, sha in db.execute(
                    "SELECT path, size, mtime_ns, ctime_ns, sha256 FROM stamps WHERE root = ?",
                    (root,),
                )
            }
            rows = db.execute(
                "SELECT s.sha256, s.body FROM symbols s WHERE s.sha256 IN "
                "(SELECT sha256 FROM stamps WHERE root = ?)",
                (root,),
            )
            names: dict[str, str] = {}  # one string per name, shared by the rows
            found = {sha: decode(body, names) for sha, body in rows}
        return stamps, found

    def save(self, rows: Iterable[Row]) -> None:
        """Adds each file's stamp and hash, and the symbols of the hashes parsed anew (a row
        whose symbols are None only moves a file to bytes already known), in one transaction."""
        rows = list(rows)
        stamp_rows = [(root, path, *stamp, sha) for root, path, stamp, sha, _ in rows]
        symbol_rows = [(sha, encode(found)) for *_, sha, found in rows if found is not None]
        if not stamp_rows and not symbol_rows:
            return
        with self._lock:
            if self._off:
                return
            try:
                with self._connect() as db:
                    self._stale(db)
                    db.executemany("INSERT OR REPLACE INTO symbols VALUES (?, ?)", symbol_rows)
                    db.executemany(
                        "INSERT OR REPLACE INTO stamps VALUES (?, ?, ?, ?, ?, ?)", stamp_rows
                    )
            except (sqlite3.Error, OSError) as exc:
                log.warning(
                    "the map's symbol cache %s cannot be written (%s); it is off "
                    "until the server restarts",
                    self.path,
                    exc,
                )
                self._off = True

    def prune(self, root: str, paths: Iterable[str]) -> None:
        """Forgets `root`'s files other than `paths` (gone, or now refused), and the
        symbols no file points at any more (old versions), so the file does not grow
        with every edit. Once per start, after the map is ready."""
        with self._lock:
            if self._off or not self.path.exists():
                return
            try:
                with self._connect() as db:
                    db.execute("CREATE TEMP TABLE listed (path TEXT PRIMARY KEY)")
                    db.executemany("INSERT INTO listed VALUES (?)", ((p,) for p in paths))
                    db.execute("DELETE FROM stamps WHERE root = ? AND path NOT IN listed", (root,))
                    db.execute(
                        "DELETE FROM symbols WHERE sha256 NOT IN (SELECT sha256 FROM stamps)"
                    )
            except (sqlite3.Error, OSError) as exc:
                log.warning("the map's symbol cache %s cannot be pruned (%s)", self.path, exc)

    def _connect(self) -> _Transaction:
        db = sqlite3.connect(self.path, timeout=5, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("BEGIN IMMEDIATE")
            for statement in _SCHEMA:
                db.execute(statement)
        except BaseException:
            db.close()
            raise
        return _Transaction(db)

    @staticmethod
    def _stale(db: sqlite3.Connection) -> bool:
        """Whether the rows were made by another parser: then they are dropped and the
        current fingerprint written."""
        row = db.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
        if row is not None and row[0] == fingerprint():
            return False
        for table in ("symbols", "stamps"):  # dropped: another format may have other columns
            db.execute(f"DROP TABLE {table}")
        for statement in _SCHEMA:
            db.execute(statement)
        db.execute("INSERT OR REPLACE INTO meta VALUES ('fingerprint', ?)", (fingerprint(),))
        return True

    def _put_aside(self) -> None:
        """Moves an unreadable file (and its journal) away, so the next save starts anew."""
        for suffix in ("", "-wal", "-shm"):
            part = Path(f"{self.path}{suffix}")
            try:
                part.replace(f"{part}.corrupt") if suffix == "" else part.unlink(missing_ok=True)
            except OSError:
                self._off = True  # cannot be moved: leave it alone rather than fail again


class _Transaction:
    """A connection as a context: commits what the block did, rolls back on an error,
    closes either way (sqlite3's own context manager does not close)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        return self.db

    def __exit__(self, kind, *_) -> None:
        try:
            self.db.execute("ROLLBACK" if kind else "COMMIT")
        finally:
            self.db.close()
