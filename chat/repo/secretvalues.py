"""What a secret value looks like: whether one given to a secret-sounding name is a literal
secret, and its copies in other spellings.

`chat.repo.credentials` finds `NAME = value` where the name ends in PASSWORD, SECRET, KEY or
TOKEN; these judge the value: a reference (`${VAR}`, `$VAR`, `%(name)s`, `{{ var }}`,
`<placeholder>`, a path), code (`get_password()`, `settings.SECRET`) or a word is not a
secret; a value that mixes kinds of characters is, for a name that says password or
secret; a name that says only key or token (`CACHE_KEY`, `sort_key`) needs a value that
reads like a generated key. A value found may be elsewhere spelled so that no shape
matches it (the base64 of a token in a run's output, a password URL-encoded in a log, the
hex of a key, the bare value without its name): `Copies.of(values)` works out what each
value's copies look like, and `redact` replaces each by the value's marker, a base64 or
hex copy with the whole run of such characters it sits in (the value may be the middle of
a longer encoded text, as in `Basic base64(user:password)`); values shorter than
`MIN_CHARS` are left out, as their copies would turn up by chance. Plain text work: no
I/O, no state.
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import pairwise
from urllib.parse import quote

_HEX = re.compile(r"[0-9a-fA-F]{20,}")
_BASE64 = re.compile(r"[A-Za-z0-9+/=_-]{20,}")
_SEPARATORS = frozenset("_-./:")
_DIGITS = re.compile(r"[0-9]+")
# Quoted or not: a template or an environment variable, a placeholder, a path.
_REFERENCE = re.compile(
    r"\$\{|\{\{|%\(\w+\)[sdr]|\{[\w.]*\}|<[\w .-]*>|os\.environ|process\.env|getenv"
    r"|\A\$[A-Za-z_]\w*\Z"
)
# A value that is part of an expression, or text between the quotes of two strings
# (`"API Key: ",n.api_key,(0,s.jsx)(`): no key or password holds these.
_EXPRESSION = re.compile(r"[,;]|&&|\|\|")
_PATH = re.compile(r"(?:~|\.{1,2})?/[\w.-]+(?:/[\w.-]+)+/?\Z")
# Unquoted only: YAML's anchors, aliases, tags, flow collections and block scalars, and
# references (`$VAR`, `%VAR%`), which a quoted literal in code may well start with.
_BARE_SYNTAX = frozenset("{[(&*!@|<>%$")
# An unquoted value that is code: a name or an attribute chain, maybe called or indexed
# (the call may go on to the next line).
_CODE = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|->|\?\.)[A-Za-z_$][\w$]*)*(?:[(\[].*)?[,;]?\Z")


def reference(value: str, *, quoted: bool) -> bool:
    """A value that names where the secret is rather than holding it (an environment
    variable, a template's field, a placeholder, a path), or that is code around strings."""
    if _EXPRESSION.search(value):
        return True
    if not quoted and value[:1] in _BARE_SYNTAX:
        return True
    if "://" in value:
        return True  # a URL: a password in it is the URL shape's
    if _PATH.match(value) and not looks_random(value.replace("/", "")):
        return True  # base64 has slashes too: a key is random between them
    return bool(_REFERENCE.search(value))


def code(value: str) -> bool:
    """An unquoted value that reads as code (`get_password()`, `self.password,`), markup
    (`L{bytes}`) or part of an expression (brackets that do not pair up), unless it is as
    random as a key: an identifier-shaped word in a YAML file is missed, a key is not."""
    if "{" in value or "}" in value or not _paired(value):
        return True
    return bool(_CODE.match(value)) and not looks_random(value)


def _paired(value: str) -> bool:
    depth = 0
    for c in value:
        depth += (c in "([") - (c in ")]")
        if depth < 0:
            return False
    return depth == 0


def mixed(value: str) -> bool:
    """At least two of lower case, upper case, digits and other characters: a password
    rather than a word (`changeme` is most likely a placeholder)."""
    classes = (
        any(c.islower() for c in value),
        any(c.isupper() for c in value),
        any(c.isdigit() for c in value),
        any(not c.isalnum() for c in value),
    )
    return sum(classes) >= 2


def keyish(value: str) -> bool:
    """A value that reads like a generated key or token, not a name: 16 characters or
    more with letters and digits, and either long hex, symbols other than `_-./:` among
    them (Django's keys), or lower case, upper case and digits taking turns at least every
    third character with digits in two places or more (`Xk82mQp0…`; a name's words have
    digits in one place at most: `heightOfGeoidWGS84Units`)."""
    letters, digits = any(c.isalpha() for c in value), any(c.isdigit() for c in value)
    if len(value) < 16 or not (letters and digits):
        return False
    if _HEX.fullmatch(value) or any(not c.isalnum() and c not in _SEPARATORS for c in value):
        return True
    pairs = [(a, b) for a, b in pairwise(value) if a.isalnum() and b.isalnum()]
    switches = sum(_kind(a) != _kind(b) for a, b in pairs)
    return switches >= len(value) // 3 and len(_DIGITS.findall(value)) >= 2


def _kind(c: str) -> int:
    return 0 if c.isdigit() else 1 if c.islower() else 2


def looks_random(body: str) -> bool:
    """A value that reads like a key rather than words: long hex, or long base64 mixing
    upper case, lower case and digits with high entropy."""
    if _HEX.fullmatch(body):
        return any(c.isdigit() for c in body) and any(c.isalpha() for c in body)
    if not _BASE64.fullmatch(body) or not _mixed_three(body):
        return False
    counts = [body.count(c) for c in set(body)]
    entropy = -sum(n / len(body) * math.log2(n / len(body)) for n in counts)
    return entropy >= 3.5


def _mixed_three(value: str) -> bool:
    return (
        any(c.islower() for c in value)
        and any(c.isupper() for c in value)
        and any(c.isdigit() for c in value)
    )


# -- copies of a value in other spellings ---------------------------------------------------

MIN_CHARS = 8
_BASE64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_")
_HEX_CHARS = frozenset("0123456789abcdefABCDEF")
_NONE: frozenset[str] = frozenset()
_URLSAFE = str.maketrans("+/", "-_")
_UNRESERVED = re.compile(r"[A-Za-z0-9._~-]{4,}")


@dataclass(frozen=True)
class _Form:
    """Where a copy may be: `literal` found as plain text (at memory speed), or
    `pattern` where `text` holds `literal`."""

    literal: str
    marker: str
    run: frozenset[str] = _NONE  # a copy is widened to the run of these around it
    padding: str = ""  # and over these after it
    pattern: re.Pattern[str] | None = None

    def spans(self, text: str) -> list[tuple[int, int]]:
        if self.pattern is not None:
            found = self.pattern.finditer(text) if self.literal in text else ()
            return [match.span() for match in found]
        spans, at = [], text.find(self.literal)
        while at >= 0:
            spans.append(_widened(text, at, at + len(self.literal), self))
            at = text.find(self.literal, at + len(self.literal))
        return spans


@dataclass(frozen=True)
class Copies:
    forms: tuple[_Form, ...] = ()

    @classmethod
    def of(cls, values: Mapping[str, str]) -> Copies:
        """The copies of each value (value → its marker) worth looking for."""
        forms: list[_Form] = []
        for value, marker in values.items():
            if len(value) < MIN_CHARS:
                continue
            raw = value.encode("utf-8", "surrogatepass")
            cores = _base64_cores(raw)
            forms += [_Form(core, marker, _BASE64_CHARS, "=") for core in cores]
            hexed = raw.hex()
            forms += [_Form(h, marker, _HEX_CHARS) for h in (hexed, hexed.upper())]
            forms.append(_Form(value, marker))
            if quote(value, safe="") != value:  # else it is the value as is
                # every encoder leaves the longest run of unreserved characters as it is
                runs = sorted(_UNRESERVED.findall(value), key=len)
                pattern = re.compile(_percent_encoded(value))
                forms.append(_Form(runs[-1] if runs else "", marker, pattern=pattern))
        return cls(tuple(forms))

    def redact(self, text: str) -> str:
        """`text` with every copy replaced by its value's marker."""
        if not self.forms or not text:
            return text
        found = [(b, e, form.marker) for form in self.forms for b, e in form.spans(text)]
        if not found:
            return text
        found.sort()
        pieces, start = [], 0
        for begin, end, marker in found:
            if begin < start:  # overlaps the copy just replaced: it is gone with it
                continue
            pieces += [text[start:begin], marker]
            start = end
        return "".join([*pieces, text[start:]])


def _base64_cores(raw: bytes) -> list[str]:
    """The part of base64 text that is the same wherever `raw` sits in the encoded data:
    at each of the three offsets, the characters made of `raw`'s bits only (standard and
    URL-safe alphabets)."""
    cores = []
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw).decode("ascii")
        core = encoded[-(-offset * 8 // 6) : (offset + len(raw)) * 8 // 6]
        cores += [core, core.translate(_URLSAFE)]
    return list(dict.fromkeys(cores))


def _percent_encoded(value: str) -> str:
    """A pattern for `value` with any of its characters percent-encoded (either case of
    hex digits, `+` for a space) or left as they are."""
    parts = []
    for char in value:
        escaped = "".join(
            f"%[{b >> 4:X}{b >> 4:x}][{b & 15:X}{b & 15:x}]" for b in char.encode("utf-8")
        )
        alternatives = [re.escape(char), escaped, *([r"\+"] if char == " " else [])]
        parts.append("(?:" + "|".join(alternatives) + ")")
    return "".join(parts)


def _widened(text: str, begin: int, end: int, form: _Form) -> tuple[int, int]:
    while begin > 0 and text[begin - 1] in form.run:
        begin -= 1
    while end < len(text) and text[end] in form.run:
        end += 1
    while end < len(text) and text[end] in form.padding:
        end += 1
    return begin, end
