"""Credentials inside text that is about to leave: found, named, replaced, never sent.

Everything acdc sends to a model provider is text from the repository or the person; a
file that is not shaped like a secret can still hold one (a key pasted into a config, a
token in a script). `redact` replaces each value of the shapes below by a marker that
names its kind (`[redacted: an AWS access key]`), `kinds_in` names the kinds a text holds,
`tool_output` is what the model's tools return, and `elide_literals` is how the repository
map shows a constant. Scans are cached by the text's hash, so the files and history that
go out with every turn cost a lookup. Nothing here returns the matched text: a warning
built from it leaks nothing. Non-goals: where the text goes or who is told (chat.turn).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from threading import Lock

GENERIC = "a password or secret"
_PASSWORD_VALUE = (
    r"[\"']?\s*(?::|=>?|:=)\s*(?P<quote>[\"'])(?P<value>[^\"'\s{}$<>%]{8,200})(?P=quote)"
)
# (kind, pattern, how): shapes specific enough to be replaced on sight. A `value` group,
# when there is one, is what gets replaced (the name before it stays); else the whole
# match. Each pattern starts with a literal, so the search skips along at memory speed (a
# leading \b or a case-blind start makes it try every position, 100 times slower): "word"
# asks for a word boundary before the match, checked afterwards; "fold" patterns are
# written in lower case and run on the lower-cased text. Where two shapes match at one
# place the first wins (sk-ant-… is Anthropic's, not OpenAI's).
_SHAPES: tuple[tuple[str, str, str], ...] = (
    (
        "a private key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"|(?:\s*(?:(?:Proc-Type|DEK-Info):[^\n]*|[A-Za-z0-9+/=]{16,}))*)",
        "",
    ),
    ("an AWS access key", r"(?:AKIA|ASIA)[0-9A-Z]{16}\b", "word"),
    (
        "an AWS secret access key",
        r"aws_?secret_?(?:access_?)?key[\"']?\s*(?::|=>?|:=)\s*[\"']?"
        r"(?P<value>[a-z0-9/+=]{40})(?![a-z0-9/+=])",
        "fold",
    ),
    ("a GitHub token", r"gh[pousr]_[A-Za-z0-9]{36,}", "word"),
    ("a GitHub token", r"github_pat_[A-Za-z0-9_]{40,}", "word"),
    ("a GitLab token", r"glpat-[A-Za-z0-9_-]{20,}", "word"),
    ("a Slack token", r"xox[abposr]-[A-Za-z0-9-]{10,}", "word"),
    ("an Anthropic API key", r"sk-ant-[A-Za-z0-9_-]{20,}", "word"),
    ("an OpenAI API key", r"sk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{32,}", "word"),
    ("a Google API key", r"AIza[0-9A-Za-z_-]{35}\b", "word"),
    ("a Stripe secret key", r"[sr]k_live_[0-9A-Za-z]{20,}", "word"),
    ("an npm token", r"npm_[A-Za-z0-9]{36}\b", "word"),
    ("a PyPI token", r"pypi-AgE[A-Za-z0-9_-]{50,}", "word"),
    ("a Hugging Face token", r"hf_[A-Za-z0-9]{34,}\b", "word"),
    ("a SendGrid key", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b", "word"),
    (
        "a JSON Web Token",
        r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
        "word",
    ),
    (
        "a password in a URL",  # found from its "://", then its scheme is checked
        r"://[^\s:/@\"'<>]{1,64}:(?P<value>[^\s:/@\"'<>${}]{3,128})@",
        "url",
    ),
    # a quoted value given to a name that ends with what it is: DB_PASSWORD = "…"
    (GENERIC, r"passw(?:or)?d" + _PASSWORD_VALUE, "fold"),
    (GENERIC, r"secret" + _PASSWORD_VALUE, "fold"),
    (GENERIC, r"api_?key" + _PASSWORD_VALUE, "fold"),
    (GENERIC, r"access_?token" + _PASSWORD_VALUE, "fold"),
    (GENERIC, r"auth_?token" + _PASSWORD_VALUE, "fold"),
)
KINDS: tuple[str, ...] = tuple(dict.fromkeys(kind for kind, _, _ in _SHAPES))
SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern)) for kind, pattern, _ in _SHAPES
)
_HOW = tuple(how for _, _, how in _SHAPES)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{1,20}\Z")
_MARKER = re.compile(r"\[redacted: ([a-zA-Z][a-zA-Z .-]{2,40})\]")


def marker(kind: str) -> str:
    return f"[redacted: {kind}]"


@dataclass(frozen=True)
class Redaction:
    text: str  # the text with each value replaced by its marker (the same object if none)
    found: tuple[str, ...] = ()  # the kind of each value replaced, in the order of the text

    @property
    def kinds(self) -> list[str]:
        """The kinds found, each once, in the order of SHAPES."""
        return [kind for kind in KINDS if kind in self.found]


def redact(text: str) -> Redaction:
    """`text` with every credential-shaped value replaced by a marker naming its kind."""
    if not text:
        return Redaction(text)
    key = _key(text)
    cached = _CACHE.get(key)
    if cached is None:
        cached = _scan(text)
        _CACHE.put(key, cached)
    return Redaction(text) if cached is _CLEAN else Redaction(cached[0], cached[1])


def kinds_in(text: str) -> list[str]:
    """The kinds of credential `text` seems to hold, in the order of SHAPES."""
    return redact(text).kinds


def marked_kinds(text: str) -> list[str]:
    """The kinds named by markers `redact` or `elide_literals` left in `text`."""
    if "[redacted: " not in text:
        return []
    named = set(_MARKER.findall(text))
    return [kind for kind in KINDS if kind in named]


def tool_output(text: str) -> str:
    """A tool's result as the model gets it: redacted, with a last line that says so."""
    redaction = redact(text)
    if not redaction.found:
        return text
    count = len(redaction.found)
    values = "value" if count == 1 else "values"
    return (
        f"{redaction.text}\n[{count} credential-shaped {values} redacted: {named(redaction.kinds)}]"
    )


def named(kinds: Iterable[str]) -> str:
    """`a, b and c`."""
    kinds = list(kinds)
    return kinds[0] if len(kinds) == 1 else ", ".join(kinds[:-1]) + " and " + kinds[-1]


def warning(path: str, kinds: list[str]) -> str:
    return (
        f"{path} holds what looks like {named(kinds)}; it is sent to the model provider "
        "as [redacted: …] in its place, never as itself."
    )


# -- the scan and its cache --------------------------------------------------------------


_CLEAN = ("", ())  # the cache's answer for a text with nothing in it (most texts)


def _scan(text: str) -> tuple[str, tuple[str, ...]]:
    """`text` with each shape's value replaced, and their kinds in the order of the text;
    where two matches overlap the named shape wins, then the leftmost, then the first."""
    lower = text.lower()
    if len(lower) != len(text):  # a letter whose lower case is longer: fold in place
        lower = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    matches = []
    for index, (_, pattern) in enumerate(SHAPES):
        how = _HOW[index]
        for match in pattern.finditer(lower if how == "fold" else text):
            if _stands_alone(text, match.start(), how):
                matches.append((match.start(), index, match))
    if not matches:
        return _CLEAN
    # The named shapes first, so a token given to `secret = "…"` is named for what it is.
    matches.sort(key=lambda found: (SHAPES[found[1]][0] == GENERIC, *found[:2]))
    taken: list[tuple[int, int, str]] = []
    for _, index, match in matches:
        kind = SHAPES[index][0]
        valued = "value" in match.re.groupindex and match.group("value") is not None
        begin, end = match.span("value") if valued else match.span()
        if kind == GENERIC and not _mixed(text[begin:end]):
            continue  # `password = "changeme"`: a word, most likely a placeholder
        if not any(b < end and begin < e for b, e, _ in taken):
            taken.append((begin, end, kind))
    if not taken:
        return _CLEAN
    pieces, start = [], 0
    for begin, end, kind in sorted(taken):
        pieces += [text[start:begin], marker(kind)]
        start = end
    pieces.append(text[start:])
    return "".join(pieces), tuple(kind for _, _, kind in sorted(taken))


def _stands_alone(text: str, at: int, how: str) -> bool:
    """A "word" match starts a word; a "url" match follows a scheme (postgres://)."""
    if how == "word":
        return at == 0 or not (text[at - 1].isalnum() or text[at - 1] == "_")
    if how == "url":
        return bool(_SCHEME.search(text, max(0, at - 21), at))
    return True


def _mixed(value: str) -> bool:
    """At least two of lower case, upper case, digits and other characters."""
    classes = (
        any(c.islower() for c in value),
        any(c.isupper() for c in value),
        any(c.isdigit() for c in value),
        any(not c.isalnum() for c in value),
    )
    return sum(classes) >= 2


def _key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class _Scans:
    """The last `size` scans by content hash; a clean text costs its key only."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[bytes, tuple[str, tuple[str, ...]]] = OrderedDict()
        self._lock = Lock()

    def get(self, key: bytes) -> tuple[str, tuple[str, ...]] | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: bytes, value: tuple[str, tuple[str, ...]]) -> None:
        with self._lock:
            self._items[key] = value
            if len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


_CACHE = _Scans(200_000)


# -- constants in the repository map -------------------------------------------------------

_LITERAL = re.compile(
    r"(?P<quote>\"\"\"|'''|\"|'|`)(?P<body>(?:\\.|(?!(?P=quote)).)*?)(?P<end>(?P=quote)|$)"
)
_SECRET_WORDS = frozenset(
    (
        "key", "keys", "secret", "secrets", "token", "tokens", "password", "passwords",
        "passwd", "pwd", "credential", "credentials", "private", "apikey", "passphrase", "salt",
    )
)  # fmt: skip
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_HEX = re.compile(r"[0-9a-fA-F]{20,}")
_BASE64 = re.compile(r"[A-Za-z0-9+/=_-]{20,}")
# a name and `=` or `:` (with a type between) just before a literal: `password: str = "…"`
_ASSIGNED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=,(){}\"']*)?[=:]\s*$")
ELIDED = "…"


def secret_name(name: str) -> bool:
    """Whether a name says it holds a secret: API_KEY, apiKey, db_password, PRIVATE_PEM."""
    return any(word.lower() in _SECRET_WORDS for word in _WORDS.findall(name))


def elide_literals(text: str, name: str = "") -> str:
    """`text` (a definition's signature) with the values of its string literals left out
    where they may be secrets: credential shapes become their marker; every literal of a
    definition whose `name` says secret, and high-entropy literals (hex or base64, 20
    characters or more) and literals given to a parameter or key whose name says secret
    become `…`. Other literals stay: they are what a map is for."""
    scanned = _scan(text)  # not cached: a map has many short signatures, seen once each
    text = text if scanned is _CLEAN else scanned[0]
    if "'" not in text and '"' not in text and "`" not in text:
        return text
    secret = secret_name(name)

    def literal(match: re.Match[str]) -> str:
        body = match.group("body")
        if not body or _MARKER.fullmatch(body):
            return match.group(0)
        given = _ASSIGNED.search(text, max(0, match.start() - 80), match.start())
        if secret or _random(body) or (given and secret_name(given.group(1))):
            return match.group("quote") + ELIDED + match.group("end")
        return match.group(0)

    return _LITERAL.sub(literal, text)


def _random(body: str) -> bool:
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
