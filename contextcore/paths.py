"""How a repository path is written where the model reads it: one line naming one file.

A path is shown as it is unless it would read as something else — a colon before a line
number, a line break that splits a listing or a prompt line, a leading quote, spaces at
either end (or, in `key=value` lines, anywhere) — and then as a JSON string literal. One
owner for the rule: the tools, the map (through `chat.repo.git`) and the prompt's file
labels, manifest and metadata lines all write paths with it. Non-goal: judging a path
(that is the repository boundary's work).
"""

from __future__ import annotations

import json
import unicodedata


def shown(path: str, *, spaces: bool = False) -> str:
    """`path` as one unambiguous piece of text; `spaces` quotes any inner space too, for
    `key=value` lines where a space would end the value."""
    plain = path and path == path.strip() and not path.startswith('"') and ":" not in path
    quoted_space = spaces and any(ch.isspace() for ch in path)
    if plain and not quoted_space and not any(_breaks(ch) for ch in path):
        return path
    # json leaves DEL, C1 controls and U+2028/9 as they are when not escaping to ASCII.
    text = json.dumps(path, ensure_ascii=False)
    return "".join(f"\\u{ord(ch):04x}" if _breaks(ch) else ch for ch in text)


def _breaks(ch: str) -> bool:
    # Control characters (\n, \r, \t, NEL …) and the Unicode line and paragraph separators:
    # every character str.splitlines() splits at is in one of these categories.
    return unicodedata.category(ch) in ("Cc", "Zl", "Zp")
