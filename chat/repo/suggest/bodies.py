"""A lexical index of the repository's definitions, names and bodies (SQLite FTS5).

One in-memory FTS5 table per repository: a row per definition (functions, classes,
methods: depth 0 and 1) with its name and its body's words, identifiers also split into
their parts (`parseHeader`, `parse_header` → parse, header). Kept current from the map's
symbols: a file whose symbols object changed (the symbol cache makes a new one per change)
is read again, the others are not looked at. Generated and vendored files are never
indexed. `search` ranks by BM25, the name weighing more than the body, and leaves out
words that most definitions hold (they say nothing about where to look).
Thread-safe (one lock per index). Non-goals: parsing (the map's), combining ranks.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from chat.repo.repomap.symbols import Definition, FileSymbols
from chat.repo.suggest import generated

MAX_DEPTH = 1  # functions, classes and their methods
BODY_CHARS = 20_000  # of one definition, indexed
COMMON_SHARE = 0.2  # a word in more of the definitions than this is left out of a query
COMMON_FLOOR = 12  # … unless it is in fewer definitions than this
NAME_WEIGHT = 4.0
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SCHEMA = (
    "CREATE VIRTUAL TABLE defs USING fts5(path UNINDEXED, at UNINDEXED, name, body, "
    "tokenize = 'unicode61')",
    "CREATE VIRTUAL TABLE words USING fts5vocab(defs, 'row')",
)


@dataclass(frozen=True)
class Hit:
    path: str
    definition: Definition
    score: float  # BM25, higher is better
    words: tuple[str, ...]  # the query's words its row holds


def parts(word: str) -> list[str]:
    """An identifier's parts, lower case: `parseHTTPHeader` → parse, http, header."""
    return [p.lower() for p in _PART.findall(word)]


def terms(text: str) -> str:
    """The words FTS5 indexes for `text`: its own, and its identifiers' parts."""
    found = []
    for word in _WORD.findall(text):
        split = parts(word)
        if len(split) > 1:
            found += split
    return text + "\n" + " ".join(found)


class BodyIndex:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        for statement in _SCHEMA:
            self._db.execute(statement)
        self._seen: dict[str, FileSymbols] = {}
        self._definitions: dict[str, tuple[Definition, ...]] = {}

    def update(self, symbols: Mapping[str, FileSymbols], *, wait: bool = True) -> bool:
        """Index the files whose symbols changed since the last update (or came, or went);
        without `wait`, only if no other thread is at it (whether it was done)."""
        if not self._lock.acquire(blocking=wait):
            return False
        try:
            every = symbols.keys() | self._seen.keys()
            changed = [p for p in every if self._seen.get(p) is not symbols.get(p)]
            with self._db:
                for path in changed:
                    self._db.execute("DELETE FROM defs WHERE path = ?", (path,))
                    self._definitions.pop(path, None)
                    found = symbols.get(path)
                    if found is None:
                        self._seen.pop(path, None)
                        continue
                    self._seen[path] = found
                    self._index(path, found)
            return True
        finally:
            self._lock.release()

    def _index(self, path: str, found: FileSymbols) -> None:
        kept = tuple(d for d in found.definitions if d.depth <= MAX_DEPTH and not d.local)
        if not kept or generated.by_path(path) or generated.marked(self.root, path):
            return
        try:
            text = (self.root / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError, ValueError):
            return
        if generated.by_text(text):
            return
        lines = text.splitlines()
        self._definitions[path] = kept
        rows = []
        for at, definition in enumerate(kept):
            body = "\n".join(lines[definition.line - 1 : definition.end_line])[:BODY_CHARS]
            rows.append((path, at, terms(definition.name), terms(body)))
        self._db.executemany("INSERT INTO defs VALUES (?, ?, ?, ?)", rows)

    def indexed(self) -> frozenset[str]:
        """The files whose definitions are in the index (no generated or vendored one)."""
        with self._lock:
            return frozenset(self._definitions)

    def search(self, words: Iterable[str], limit: int = 40) -> list[Hit]:
        """The definitions best matching `words` (lower case), best first."""
        with self._lock:
            wanted = self._telling(sorted(set(words)))
            if not wanted:
                return []
            query = " OR ".join(f'"{w}"' for w in wanted)
            rows = self._db.execute(
                "SELECT path, at, bm25(defs, 0, 0, ?, 1.0), name || ' ' || body FROM defs "
                "WHERE defs MATCH ? ORDER BY bm25(defs, 0, 0, ?, 1.0) LIMIT ?",
                (NAME_WEIGHT, query, NAME_WEIGHT, limit),
            ).fetchall()
            hits = []
            for path, at, rank, text in rows:
                held = {w.lower() for w in re.findall(r"\w+", text)}
                matched = tuple(w for w in wanted if w in held)
                hits.append(Hit(path, self._definitions[path][at], -rank, matched))
            return hits

    def _telling(self, words: list[str]) -> list[str]:
        """The words that are in few enough definitions to point somewhere."""
        if not words:
            return []
        total = self._db.execute("SELECT count(*) FROM defs").fetchone()[0]
        marks = ",".join("?" * len(words))
        held = dict(self._db.execute(f"SELECT term, doc FROM words WHERE term IN ({marks})", words))
        bound = max(COMMON_FLOOR, COMMON_SHARE * total)
        return [w for w in words if 0 < held.get(w, 0) <= bound]
