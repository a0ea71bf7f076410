"""What a search query asks for: its words for the word index, its pieces for substrings.

A query is cleaned to printable text with single spaces, then read twice. As words, each
whitespace-separated term with a letter or digit becomes a quoted FTS5 string, so no user
text is query syntax. As pieces, each term with its surrounding double quotes stripped is a
literal substring; pieces of three or more characters drive the trigram indexes, shorter
ones only filter, since no trigram index can look up fewer than three characters. A query
of short terms only is therefore a whole-word search (matching word beginnings instead was
tried: a one-letter prefix took 2-3 s on a million messages).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_QUERY_CHARS = 200
TRIGRAM = 3
_INDEXABLE = re.compile(r"[^\W_]")


@dataclass(frozen=True)
class Terms:
    text: str
    pieces: tuple[str, ...]

    @property
    def long_pieces(self) -> tuple[str, ...]:
        return tuple(p for p in self.pieces if len(p) >= TRIGRAM)

    @property
    def short_pieces(self) -> tuple[str, ...]:
        return tuple(p for p in self.pieces if len(p) < TRIGRAM)


def clean_query(raw: str) -> tuple[str, bool]:
    """Printable text with single spaces, at most MAX_QUERY_CHARS; and whether it was cut."""
    printable = "".join(ch if ch.isprintable() else " " for ch in raw or "")
    text = " ".join(printable.split())
    if len(text) <= MAX_QUERY_CHARS:
        return text, False
    return text[:MAX_QUERY_CHARS].rstrip(), True


def terms_of(text: str) -> Terms:
    """The query's terms; a query of quotes only is its own single piece."""
    pieces = tuple(dict.fromkeys(p for p in (t.strip('"') for t in text.split()) if p))
    return Terms(text=text, pieces=pieces or ((text,) if text else ()))


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def fts5_query(text: str) -> str:
    """Each term with a letter or digit as an FTS5 string; '' when there is none."""
    return " ".join(_quoted(t) for t in text.split() if _INDEXABLE.search(t))


def fts5_substring_query(pieces: tuple[str, ...]) -> str:
    """Every piece as an FTS5 string, for the trigram table: each must occur somewhere."""
    return " ".join(_quoted(p) for p in pieces)


def trigrams(pieces: tuple[str, ...]) -> tuple[str, ...]:
    """Every three-character run of the pieces, once each, for an index without positions."""
    runs = (p[i : i + TRIGRAM] for p in pieces for i in range(len(p) - TRIGRAM + 1))
    return tuple(dict.fromkeys(runs))


def fold(text: str) -> str:
    """`text` with each character's case folded on its own, as FTS5's trigram tokenizer
    does (a character whose lower case is longer than one character stays as it is)."""
    if text.isascii():
        return text.lower()
    return "".join(low if len(low := ch.lower()) == 1 else ch for ch in text)


def like_pattern(piece: str) -> str:
    """A LIKE pattern matching `piece` anywhere, its wildcards escaped with a backslash."""
    escaped = piece.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def where_filters(repository: str, role: str | None, exclude: list[str]) -> tuple[str, list]:
    """The SQL both backends add after their match (aliases m, s) and its parameters."""
    sql, params = "AND s.repository = %s", [repository]
    if role:
        sql, params = sql + " AND m.role = %s", [*params, role]
    if exclude:
        sql += f" AND m.id NOT IN ({', '.join(['%s'] * len(exclude))})"
        params += exclude
    return sql, params
