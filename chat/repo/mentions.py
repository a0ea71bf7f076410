"""@-mentions in the message box: what the completion may offer, and what a sent one may name.

The completion runs in the page, ranked by the Files panel's own filter (filter.js) over the
picker's file list and over `symbol_index`, the definitions the repository map already
parsed (its cache: nothing is read or parsed for this, and the map's listing has been through
the boundary, so no internal or secret-shaped file is ever named). A mention that arrives
with a message is checked again here (`checked`): a file of the repository, inside the
boundary, a secret-shaped one only when the person confirmed it in this session; a symbol
names its file and line. What is stored is the checked mention, in the order typed. A
symbol's *body* (`body`) is read when the message is sent, from the definition the map
finds at that line (or by that name, if the file moved it), and enters the context as a
tool output the person asked for (a `toolcall` object, tool "mention", redacted like any
tool's output): it is active, leaves after the collapse window as tool outputs do, and can
be pinned. Every mention is checked before any body is recorded, so a refused message
leaves nothing behind. Non-goals: adding a file or outline to the context (the page ticks
it as the Files panel does).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path

from chat.repo import credentials, indexing, sessionsets
from chat.repo.repomap import builder as repomap
from chat.repo.repomap.symbols import Definition
from contextcore.files import DEFAULT_SIZE_CAP, check_text
from history.models import Session

MAX_MENTIONS = 20
MAX_SYMBOLS = 50_000  # the payload stays a few MB on a 10k-file repository
MAX_DEPTH = 1  # top-level definitions and their methods; not functions inside functions
MAX_BODY_CHARS = 20_000  # as a tool's output


class MentionRefused(ValueError):
    """A mention that cannot be sent; the message is fit to show the user."""


@dataclass(frozen=True)
class Mention:
    path: str
    symbol: str = ""  # empty for a file mention
    line: int = 0  # the symbol's first line (1-based), 0 for a file
    body: bool = False  # a symbol's body, rather than its file's outline

    @property
    def kind(self) -> str:
        """file (whole), symbol (its file's outline) or body (the symbol's own lines)."""
        return ("body" if self.body else "symbol") if self.symbol else "file"

    def as_json(self) -> dict:
        return {"kind": self.kind, "path": self.path, "symbol": self.symbol, "line": self.line}


def symbol_index(root: Path, maps: repomap.RepoMaps) -> dict:
    """The definitions the completion offers: [name, kind, path, line] rows by path and
    line, and whether the list was cut at MAX_SYMBOLS. While the server's start-up build
    of the map runs, nothing yet (`warming`: the page asks again later), so the request
    does not wait for it; a cold cache otherwise is built here, as the first turn would."""
    if maps.warming(root):
        return {"symbols": [], "cut": False, "warming": True}
    symbols, _ = maps.symbols(root)
    rows: list[list] = []
    for path in sorted(symbols):
        for found in symbols[path].definitions:
            if found.depth <= MAX_DEPTH:
                rows.append([found.name, found.kind, path, found.line])
    return {"symbols": rows[:MAX_SYMBOLS], "cut": len(rows) > MAX_SYMBOLS, "warming": False}


def checked(
    mentions: tuple[Mention, ...],
    session: Session,
    repo: indexing.Repository,
    *,
    maps: repomap.RepoMaps,
) -> list[dict]:
    """The mentions as stored, or MentionRefused naming the first that cannot be sent; the
    bodies asked for are recorded once all are known to be sendable."""
    if len(mentions) > MAX_MENTIONS:
        raise MentionRefused(f"At most {MAX_MENTIONS} mentions per message.")
    kept: list[Mention] = []
    bodies: list[tuple[str, Definition, str]] = []
    for mention in dict.fromkeys(mentions):
        key = _located(mention.path, session.id, repo)
        if mention.body:
            found, text = _body(repo, maps, key, mention)
            bodies.append((key, found, text))
            kept.append(Mention(key, found.name, found.line, body=True))
        else:
            kept.append(Mention(key, mention.symbol, mention.line))
    for key, found, text in bodies:
        _record_body(session, key, found, text)
    return [m.as_json() for m in kept]


def _located(path: str, session_id: str, repo: indexing.Repository) -> str:
    confirmed = sessionsets.confirmed_secret(session_id, path, repo)
    try:
        key, _ = indexing.locate(repo, path, allow_secret=confirmed)
    except indexing.IndexingError as exc:
        raise MentionRefused(f"The mention @{path} cannot be sent: {exc}.") from None
    if not (repo.root / key).is_file():
        raise MentionRefused(f"The mention @{key} names no file of the repository.")
    return key


def _body(
    repo: indexing.Repository, maps: repomap.RepoMaps, key: str, mention: Mention
) -> tuple[Definition, str]:
    """The definition the mention names (at its line, else the first of that name) and
    the file's text it spans."""
    symbols, _ = maps.file_symbols(repo.root, key)
    named = [d for d in symbols.definitions if d.name == mention.symbol]
    found = next((d for d in named if d.line == mention.line), named[0] if named else None)
    if found is None:
        raise MentionRefused(f"The mention @{mention.symbol}: {key} no longer defines it.")
    try:
        text, reason = check_text((repo.root / key).read_bytes(), DEFAULT_SIZE_CAP)
    except OSError as exc:
        raise MentionRefused(
            f"The mention @{mention.symbol}: {key} cannot be read ({exc.strerror})."
        ) from None
    if text is None:
        raise MentionRefused(f"The mention @{mention.symbol}: {key} is a {reason}.")
    return found, "\n".join(text.splitlines()[found.line - 1 : found.end_line])


def _record_body(session: Session, key: str, found: Definition, text: str) -> None:
    head = (
        f"{key}:{found.line}-{found.end_line} ({found.kind} {found.name}, mentioned by the person)"
    )
    if len(text) > MAX_BODY_CHARS:
        text = text[:MAX_BODY_CHARS] + f"\n[cut: the body is {len(text):,} characters]"
    indexing.record_toolcall(
        session=session,
        call_id=f"mention_{uuid.uuid4().hex[:12]}",
        tool="mention",
        args={"path": key, "symbol": found.name, "line": found.line},
        status="ok",
        output=credentials.tool_output(f"{head}\n{text}"),
        args_display=f"{found.name} in {key}",
    )
