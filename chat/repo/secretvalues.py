"""Whether a value given to a secret-sounding name is a literal secret, judged by its shape.

`chat.repo.credentials` finds `NAME = value` where the name ends in PASSWORD, SECRET, KEY or
TOKEN; these judge the value: a reference (`${VAR}`, `$VAR`, `%(name)s`, `{{ var }}`,
`<placeholder>`, a path), code (`get_password()`, `settings.SECRET`) or a word is not a
secret; a value that mixes kinds of characters is, for a name that says password or
secret; a name that says only key or token (`CACHE_KEY`, `sort_key`) needs a value that
reads like a generated key. Plain functions of the value: no I/O, no state.
"""

from __future__ import annotations

import math
import re
from itertools import pairwise

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
