"""Search hits and their snippets, as parts (text, marked) the template escapes and marks.

Database snippets arrive with private-use sentinels around each match and are split here;
substring hits are cut in Python around the first piece found, every piece marked, because
FTS5's highlight() garbles text when trigram matches overlap (SQLite 3.40). Non-goal:
querying; the backends' modules do that and hand rows of message ids here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from history.models import Message

SNIPPET_RADIUS = 80
START, STOP = "\ue000", "\ue001"  # private-use sentinels: never in a cleaned query
# ts_headline drops anything that parses as an HTML tag, so angle brackets go in disguised.
LT, GT = "\ue002", "\ue003"
_MARKED = re.compile(f"{START}(.*?){STOP}", re.S)


@dataclass(frozen=True)
class SnippetPart:
    text: str
    marked: bool = False


@dataclass(frozen=True)
class SearchHit:
    message_id: str
    session_id: str
    session_title: str
    role: str
    timestamp: datetime
    parts: tuple[SnippetPart, ...]
    image_shas: tuple[str, ...] = ()
    whole_words: bool = True  # False: found only inside longer words


@dataclass(frozen=True)
class SearchResults:
    query: str
    truncated: bool = False
    mode: str = "empty"  # "ranked", "substring", "memory" or "empty"
    hits: list[SearchHit] = field(default_factory=list)
    short: bool = False  # no term of 3+ characters: whole words and word beginnings only


def word_hits(rows: list[tuple[str, str]]) -> list[SearchHit]:
    """Hits for (message id, database snippet) rows, in the rows' order."""
    messages = _messages_by_id([message_id for message_id, _ in rows])
    return [
        _hit(messages[message_id], marked_parts(snippet))
        for message_id, snippet in rows
        if message_id in messages
    ]


def substring_hits(ids: list[str], pieces: tuple[str, ...]) -> list[SearchHit]:
    """Hits for message ids found by substring, in the ids' order, every piece marked."""
    messages = _messages_by_id(ids)
    return [
        _hit(
            messages[i],
            pieces_snippet(messages[i].content, pieces),
            whole_words=_as_words(messages[i].content, pieces),
        )
        for i in ids
        if i in messages
    ]


def _as_words(content: str, pieces: tuple[str, ...]) -> bool:
    """Whether every piece stands as a word of its own somewhere in `content` (a word
    match the word index left out, e.g. one older than the window SQLite ranks)."""
    return all(
        re.search(rf"(?<!\w){re.escape(piece)}(?!\w)", content, re.IGNORECASE) for piece in pieces
    )


def _messages_by_id(ids: list[str]) -> dict[str, Message]:
    rows = Message.objects.filter(pk__in=ids).select_related("session")
    return {m.id: m for m in rows.prefetch_related("image_links")}


def _hit(message: Message, parts: tuple[SnippetPart, ...], whole_words: bool = True) -> SearchHit:
    return SearchHit(
        message_id=message.id,
        session_id=message.session_id,
        session_title=message.session.display_title,
        role=message.role,
        timestamp=message.timestamp,
        parts=parts,
        image_shas=tuple(link.image_id for link in message.image_links.all()),
        whole_words=whole_words,
    )


def marked_parts(snippet: str) -> tuple[SnippetPart, ...]:
    """Split a database snippet at its sentinels; stray sentinels are dropped."""
    parts: list[SnippetPart] = []
    position = 0
    for found in _MARKED.finditer(snippet):
        parts.append(SnippetPart(_plain(snippet[position : found.start()])))
        parts.append(SnippetPart(_plain(found.group(1)), marked=True))
        position = found.end()
    parts.append(SnippetPart(_plain(snippet[position:])))
    return tuple(p for p in parts if p.text)


def _plain(text: str) -> str:
    return text.replace(START, "").replace(STOP, "").replace(LT, "<").replace(GT, ">")


def python_snippet(content: str, needle: str) -> tuple[SnippetPart, ...]:
    """A window of text around the first case-insensitive occurrence, the match marked."""
    return pieces_snippet(content, (needle,))


def pieces_snippet(content: str, pieces: tuple[str, ...]) -> tuple[SnippetPart, ...]:
    """A window around the first occurrence of any piece, each occurrence in it marked."""
    ordered = sorted((p for p in pieces if p), key=len, reverse=True)
    pattern = re.compile("|".join(map(re.escape, ordered)), re.IGNORECASE) if ordered else None
    first = pattern.search(content) if pattern else None
    if first is None:
        cut = content[: 2 * SNIPPET_RADIUS]
        return (SnippetPart(cut + ("…" if len(content) > len(cut) else "")),)
    start = max(0, first.start() - SNIPPET_RADIUS)
    stop = min(len(content), first.end() + SNIPPET_RADIUS)
    parts = [SnippetPart("…")] if start else []
    position = start
    for found in pattern.finditer(content, start, stop):
        parts.append(SnippetPart(content[position : found.start()]))
        parts.append(SnippetPart(found.group(), marked=True))
        position = found.end()
    parts.append(SnippetPart(content[position:stop] + ("…" if stop < len(content) else "")))
    return _merged(parts)


def _merged(parts: list[SnippetPart]) -> tuple[SnippetPart, ...]:
    """Adjacent parts of the same kind joined, empty ones dropped."""
    merged: list[SnippetPart] = []
    for part in parts:
        if not part.text:
            continue
        if merged and merged[-1].marked == part.marked:
            merged[-1] = SnippetPart(merged[-1].text + part.text, part.marked)
        else:
            merged.append(part)
    return tuple(merged)
