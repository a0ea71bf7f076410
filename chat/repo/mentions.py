"""@-mentions in the message box: what the completion may offer, and what a sent one may name.

The completion runs in the page, ranked by the Files panel's own filter (filter.js) over the
picker's file list and over `symbol_index`, the definitions the repository map already
parsed (its cache: nothing is read or parsed for this, and the map's listing has been through
the boundary, so no internal or secret-shaped file is ever named). A mention that arrives
with a message is checked again here (`checked`): a file of the repository, inside the
boundary, a secret-shaped one only when the person confirmed it in this session; a symbol
names its file and line. What is stored is the checked mention, in the order typed.
Non-goals: adding the file to the context (the page ticks it as the Files panel does).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from chat.repo import indexing, sessionsets
from chat.repo.repomap import builder as repomap

MAX_MENTIONS = 20
MAX_SYMBOLS = 50_000  # the payload stays a few MB on a 10k-file repository
MAX_DEPTH = 1  # top-level definitions and their methods; not functions inside functions


class MentionRefused(ValueError):
    """A mention that cannot be sent; the message is fit to show the user."""


@dataclass(frozen=True)
class Mention:
    path: str
    symbol: str = ""  # empty for a file mention
    line: int = 0  # the symbol's first line (1-based), 0 for a file

    @property
    def kind(self) -> str:
        return "symbol" if self.symbol else "file"

    def as_json(self) -> dict:
        return {"kind": self.kind, **asdict(self)}


def symbol_index(root: Path, maps: repomap.RepoMaps = repomap.MAPS) -> dict:
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
    mentions: tuple[Mention, ...], session_id: str, repo: indexing.Repository | None = None
) -> list[dict]:
    """The mentions as stored, or MentionRefused naming the first that cannot be sent."""
    if len(mentions) > MAX_MENTIONS:
        raise MentionRefused(f"At most {MAX_MENTIONS} mentions per message.")
    repo = repo or sessionsets.repository()
    kept: list[dict] = []
    for mention in dict.fromkeys(mentions):
        confirmed = sessionsets.confirmed_secret(session_id, mention.path, repo)
        try:
            key, _ = indexing.locate(repo, mention.path, allow_secret=confirmed)
        except indexing.IndexingError as exc:
            raise MentionRefused(f"The mention @{mention.path} cannot be sent: {exc}.") from None
        if not (repo.root / key).is_file():
            raise MentionRefused(f"The mention @{key} names no file of the repository.")
        kept.append(Mention(key, mention.symbol, mention.line).as_json())
    return kept
