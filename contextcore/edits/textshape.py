"""The shape of a file's text that an edit must keep, and the drift a model's text shows.

`Shape` holds what is not content: a byte-order mark, the dominant line ending, whether
the file ends with a newline. The punctuation table maps what chat rendering turns code
into (curly quotes, en/em dashes, non-breaking spaces, the ellipsis character) back to
ASCII. `elided_line` finds the `...` lines models write in place of code they did not
quote. Non-goals: encodings other than UTF-8 (the caller decodes), editorconfig.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

BOM = "\ufeff"
PUNCTUATION = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2033": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2015": "-",
        "\u2212": "-",
        "\u00a0": " ",
        "\u2007": " ",
        "\u2009": " ",
        "\u202f": " ",
        "\u200b": "",
        "\u2026": "...",
    }
)
FANCY = frozenset(chr(c) for c in PUNCTUATION)

# A line that stands for lines not quoted: a bare `...` or `…`, or a comment holding one
# (`# ...`, `// ... existing code ...`, `/* ... */`, `<!-- ... -->`). `...args` is code.
_COMMENT = r"^\s*(?:#|//|/\*|<!--|--|;|\*)\s*"
_ELIDED = re.compile(rf"^\s*(?:\.\.\.|…)\s*$|{_COMMENT}(?:\.\.\.|…)")
# In new text a bare `...` is Python's Ellipsis: only a comment saying what it stands for.
_ELIDED_WORDS = re.compile(
    rf"{_COMMENT}(?:(?:\.\.\.|…)\s*(?:rest|existing|unchanged|remaining|same|other|previous)\b"
    r"|.*\b(?:existing code|rest of (?:the )?(?:file|code|function|class|method)"
    r"|(?:remains?|stays?) (?:the same|unchanged))\b)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Shape:
    bom: bool
    eol: str  # "\r\n" or "\n": the ending most lines use
    final_newline: bool


def shape_of(text: str) -> Shape:
    body = text.removeprefix(BOM)
    crlf = body.count("\r\n")
    eol = "\r\n" if crlf and crlf * 2 >= body.count("\n") else "\n"
    return Shape(text.startswith(BOM), eol, body.endswith("\n"))


def with_eol(text: str, eol: str) -> str:
    """`text` with every line ending written as `eol`."""
    unified = text.replace("\r\n", "\n")
    return unified if eol == "\n" else unified.replace("\n", eol)


_FANCY_RE = re.compile("[" + "".join(sorted(FANCY)) + "]")


def has_fancy(text: str) -> bool:
    return _FANCY_RE.search(text) is not None


def ascii_punctuation(text: str) -> str:
    """`text.translate(PUNCTUATION)`, at the speed of a search: `translate` with this table
    walks every character in Python's slow path, which a 1 MB file need not pay for."""
    return _FANCY_RE.sub(lambda m: PUNCTUATION[ord(m.group())], text)


def elided_line(text: str) -> int:
    """The 1-based line of `text` that stands for unquoted lines, 0 when none does."""
    found = elided_lines(text)
    return found[0] if found else 0


def elided_lines(text: str) -> list[int]:
    """Every 1-based line of `text` that stands for unquoted lines."""
    return [n for n, line in enumerate(text.split("\n"), 1) if _ELIDED.match(line)]


def elided_by_words(new: str, old: str) -> str:
    """A line of `new` such as `# ... existing code ...` that `old` does not hold, or ""."""
    old_lines = {line.strip() for line in old.split("\n")}
    for line in new.split("\n"):
        if _ELIDED_WORDS.match(line) and line.strip() not in old_lines:
            return line.strip()
    return ""


def text_lines(text: str) -> list[str]:
    """A model's text as lines: no line-ending characters, no phantom last line."""
    lines = text.removeprefix(BOM).split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]
