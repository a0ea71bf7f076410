"""Text a person reads, made to show what it holds: terminal controls out, invisible marks in view.

`printable` is what a terminal (or a page, or a stored copy) may receive of text another
party wrote, the model or a command: every control sequence is removed (OSC such as a
clipboard write, a title or a link; CSI other than colours, so no cursor movement or erase;
DCS, SOS, PM, APC; other ESC sequences; 8-bit C1 forms) and so is every other control
character, except a newline and a tab. SGR colours (`ESC [ … m`) stay unless `colours` is
false. A carriage return not followed by a newline becomes a newline, so no line is written
over; CR LF stays. Applied to pieces of a stream one by one it is still safe: what it returns
holds no ESC but complete colour sequences, so no two pieces can join into a control.
`visible_parts` and `visible` show the characters a reader cannot see or that reorder what
is around them (bidi controls, zero-width and other format characters, spaces that are not
U+0020, variation selectors, tag characters, invisible fillers) as escapes like `\\u202e`,
and a line break as `⏎`, so one item never reads as another or spans lines.
Plain Python, no state.
"""

from __future__ import annotations

import re
from types import MappingProxyType

LINE_BREAK = "⏎"
# A complete sequence, or one control character alone; matched left to right in one pass,
# so an ESC that starts no complete sequence is removed by itself.
_CONTROL = re.compile(
    r"(?P<sgr>\x1b\[[0-9;:]*m)"
    r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d-\x9f])[^\x07\x1b\x90\x98\x9c-\x9f]*(?:\x07|\x1b\\|\x9c)"
    r"|\x1b[ -/]*[0-~]"  # other escapes: ESC 7, ESC c, ESC ( B
    r"|(?P<cr>\r(?!\n))"
    r"|[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f]"
)
_ANY_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_NAMED = MappingProxyType({"\n": LINE_BREAK, "\t": "\\t", "\r": "\\r"})
# Printable to Python, yet invisible or changing what is around them.
_INVISIBLE = frozenset(
    [0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x2800, 0x3164, 0xFFA0]
    + list(range(0x180B, 0x1810))  # Mongolian variation selectors and vowel separator
    + list(range(0xFE00, 0xFE10))  # variation selectors
    + list(range(0xE0100, 0xE01F0))  # variation selectors supplement
)


def printable(text: str, *, colours: bool = True) -> str:
    """`text` with every control sequence and control character removed but newlines,
    tabs and (when `colours`) SGR colours; a lone CR becomes a newline."""
    if not _ANY_CONTROL.search(text):
        return text
    return _CONTROL.sub(lambda m: _kept(m, colours), text)


def _kept(match: re.Match[str], colours: bool) -> str:
    if match.group("sgr") is not None:
        return match.group(0) if colours else ""
    return "\n" if match.group("cr") is not None else ""


def hidden(char: str) -> bool:
    """A character a reader would not see as itself: a control or format character, a
    line or paragraph separator, a space other than U+0020, a variation selector, a filler."""
    return char != " " and (not char.isprintable() or ord(char) in _INVISIBLE)


def escape(char: str) -> str:
    """The visible form of a hidden character: `⏎` for a line break, else `\\t`, `\\x1b`,
    `\\u202e` or `\\U000e0041`."""
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible_parts(text: str) -> list[tuple[str, bool]]:
    """`text` as runs of (text, is_escape): plain runs as they are, each hidden character
    as its escape (for a page to style the escapes apart)."""
    parts: list[tuple[str, bool]] = []
    plain: list[str] = []
    for char in text:
        if not hidden(char):
            plain.append(char)
            continue
        if plain:
            parts.append(("".join(plain), False))
            plain = []
        parts.append((escape(char), True))
    if plain:
        parts.append(("".join(plain), False))
    return parts


def visible(text: str) -> str:
    """`text` with every hidden character written as its escape (see `escape`)."""
    return "".join(escape(c) if hidden(c) else c for c in text)
