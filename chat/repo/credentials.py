"""Credentials inside text that is about to leave: found, named, replaced, never sent.

Everything acdc sends to a model provider is text from the repository or the person; a
file that is not shaped like a secret can still hold one (a key pasted into a config, a
token in a script). `redact` replaces each value of the shapes below by a marker that
names its kind (`[redacted: an AWS access key]`), `spans` says where those values are (an
edit must never touch one), `kinds_in` names the kinds a text holds, `tool_output` is
what the model's tools return, and `elide_literals` is how the repository map shows a
constant. Scans are cached by the text's hash, so the files and history that
go out with every turn cost a lookup. Nothing here returns the matched text: a warning
built from it leaks nothing. Non-goals: where the text goes or who is told (chat.turn).
"""

from __future__ import annotations

import hashlib
import re
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from threading import Lock

from chat.repo import secretvalues

GENERIC = "a password or secret"
# The value given to a name, read on the lower-cased text: `= "…"`, `: '…'`, `=> "…"`,
# `:= "…"`, `: str = "…"` (a type between), after a string prefix (b"…"), or unquoted up
# to the end of the line as YAML, .ini, .properties and shell files give it (`password:
# s3cr3t!`, `export API_TOKEN=…`). What the value must look like is secretvalues'.
_GIVEN = (
    r"[\"']?[ \t]*(?:=>?|:=|:(?:[ \t]*[a-z_][\w.\[\], |]{0,40}?[ \t]*=(?!=))?)[ \t]*"
    r"(?:[bru]{0,2}(?P<quote>[\"'`])(?P<value>[^\"'`\s\\]{8,200})(?P=quote)"
    r"|(?P<bare>[^\s\"'`]{8,200})(?=[ \t]*(?:[#;]|//|\r?\n|\Z)))"
)
# (kind, pattern, how): shapes specific enough to be replaced on sight. A `value` (or
# `bare`) group, when there is one, is what gets replaced (the name before it stays); else
# the whole match. Each pattern starts with a literal, so the search skips along at memory
# speed (a leading \b or a case-blind start makes it try every position, 100 times
# slower): "word" asks for a word boundary before the match, checked afterwards; "fold"
# and "key" patterns are written in lower case and run on the lower-cased text, "key" ones
# only where the word starts a part of the name (SECRET_KEY, apiKey; not monkey). Where
# two shapes match at one place the first wins (sk-ant-… is Anthropic's, not OpenAI's).
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
    # two literal-led patterns: a leading [sr] class made this one 15 times slower
    ("a Stripe secret key", r"sk_live_[0-9A-Za-z]{20,}", "word"),
    ("a Stripe secret key", r"rk_live_[0-9A-Za-z]{20,}", "word"),
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
    # Django's generated key (startproject), whatever name holds it
    ("a Django secret key", r"django-insecure-[a-z0-9!@#$%^&*(\-_=+)]{20,}", "word"),
    # a literal given to a name that ends with what it is: DB_PASSWORD = "…" (the name's
    # last word decides: TOKEN_TYPE = "bearer" is a type, SECRET_KEY = … a key)
    (GENERIC, r"passw(?:or)?d" + _GIVEN, "fold"),
    (GENERIC, r"pwd" + _GIVEN, "fold"),
    (GENERIC, r"secret" + _GIVEN, "fold"),
    (GENERIC, r"api_?key" + _GIVEN, "fold"),
    (GENERIC, r"access_?token" + _GIVEN, "fold"),
    (GENERIC, r"auth_?token" + _GIVEN, "fold"),
    (GENERIC, r"key" + _GIVEN, "key"),  # CACHE_KEY = "user_v2" is no secret: see keyish
    (GENERIC, r"token" + _GIVEN, "key"),
)
KINDS: tuple[str, ...] = tuple(dict.fromkeys(kind for kind, _, _ in _SHAPES))
# A line that every text holding a value of the shapes above has, read case-blind, one line
# at a time, in Perl, POSIX extended and Python syntax alike (no \s, no (?:…), no escapes
# in brackets): how `chat.repo.tools.grepping` asks git grep which files to scan. Looser
# than the shapes, never narrower; a new shape needs its lead here (tests check each kind).
CANDIDATE_LINE = "|".join(
    (
        "PRIVATE KEY",
        "(AKIA|ASIA)[0-9A-Z]{16}",
        "aws_?secret",
        "gh[pousr]_[A-Za-z0-9]{36}",
        "github_pat_",
        "glpat-[A-Za-z0-9_-]{20}",
        "xox[abposr]-[A-Za-z0-9-]{10}",
        "sk-[A-Za-z0-9_-]{20}",
        "AIza[0-9A-Za-z_-]{35}",
        "[sr]k_live_",
        "npm_[A-Za-z0-9]{36}",
        "pypi-AgE",
        "hf_[A-Za-z0-9]{34}",
        "SG[.][A-Za-z0-9_-]{22}[.]",
        "eyJ[A-Za-z0-9_-]{10}",
        "://[^ :/@\"'<>]{1,64}:[^ :/@\"'<>${}]{3,128}@",
        "django-insecure-",
        # a name, `=` or `:`, then (anywhere after) the 8 characters a value has at least
        "(passw(or)?d|pwd|secret|api_?key|access_?token|auth_?token|key|token)"
        "[^A-Za-z0-9]*[:=].*[^ \"'`]{8}",
    )
)
SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern)) for kind, pattern, _ in _SHAPES
)
_HOW = tuple(how for _, _, how in _SHAPES)
FOLDED = frozenset({"fold", "key"})  # the ways of matching that read the lower-cased text
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{1,20}\Z")
_MARKER = re.compile(r"\[redacted: ([a-zA-Z][a-zA-Z .-]{2,40})\]")


MARKER_START = "[redacted: "


def marker(kind: str) -> str:
    return f"{MARKER_START}{kind}]"


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
    cached = _cached_scan(text)
    return Redaction(text) if cached is _CLEAN else Redaction(cached[0], cached[1])


def spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, marker) of every value `redact` replaces, in the order of the text:
    `redact(text).text` is `text` with each span replaced by its marker."""
    if not text:
        return []
    return [(begin, end, marker(kind)) for begin, end, kind in _cached_scan(text)[2]]


def kinds_in(text: str) -> list[str]:
    """The kinds of credential `text` seems to hold, in the order of SHAPES."""
    return redact(text).kinds


def marked_kinds(text: str) -> list[str]:
    """The kinds named by markers `redact` or `elide_literals` left in `text`."""
    if "[redacted: " not in text:
        return []
    named = set(_MARKER.findall(text))
    return [kind for kind in KINDS if kind in named]


def markers(text: str) -> tuple[str, ...]:
    """The kind of each marker in `text`, in the order of the text."""
    if MARKER_START not in text:
        return ()
    return tuple(kind for kind in _MARKER.findall(text) if kind in KINDS)


def tool_output(text: str, found: tuple[str, ...] | None = None) -> str:
    """A tool's result as the model gets it: redacted, with a last line that says so.
    With `found`, `text` is redacted already and held values of those kinds."""
    if found is None:
        redaction = redact(text)
        text, found = redaction.text, redaction.found
    if not found:
        return text
    count = len(found)
    values = "value" if count == 1 else "values"
    kinds = [kind for kind in KINDS if kind in found]
    return f"{text}\n[{count} credential-shaped {values} redacted: {named(kinds)}]"


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


_CLEAN = ("", (), ())  # the cache's answer for a text with nothing in it (most texts)
_Scan = tuple[str, tuple[str, ...], tuple[tuple[int, int, str], ...]]


def _cached_scan(text: str) -> _Scan:
    key = _key(text)
    cached = _CACHE.get(key)
    if cached is None:
        cached = _scan(text)
        _CACHE.put(key, cached)
    return cached


def _scan(text: str) -> _Scan:
    """`text` with each shape's value replaced, their kinds and their spans (begin, end,
    kind), both in the order of the text; where two matches overlap the named shape wins,
    then the leftmost, then the first."""
    lower = text.lower()
    if len(lower) != len(text):  # a letter whose lower case is longer: fold in place
        lower = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    matches = []
    for index, (kind, pattern) in enumerate(SHAPES):
        how = _HOW[index]
        for match in pattern.finditer(lower if how in FOLDED else text):
            if _stands_alone(text, match.start(), how) and (
                span := _value_span(text, match, kind, how)
            ):
                matches.append((span, index))
    if not matches:
        return _CLEAN
    # The named shapes first, so a token given to `secret = "…"` is named for what it is.
    matches.sort(key=lambda found: (SHAPES[found[1]][0] == GENERIC, found[0][0], found[1]))
    taken: list[tuple[int, int, str]] = []
    for (begin, end), index in matches:
        if not any(b < end and begin < e for b, e, _ in taken):
            taken.append((begin, end, SHAPES[index][0]))
    taken.sort()
    pieces, start = [], 0
    for begin, end, kind in taken:
        pieces += [text[start:begin], marker(kind)]
        start = end
    pieces.append(text[start:])
    return "".join(pieces), tuple(kind for _, _, kind in taken), tuple(taken)


def _value_span(text: str, match: re.Match[str], kind: str, how: str) -> tuple[int, int] | None:
    """Where the match's secret is (its value, else all of it), or None when what a
    generic name was given is a reference, code or a word rather than a secret."""
    groups = match.re.groupindex
    quoted = "value" in groups and match.group("value") is not None
    if not quoted and not ("bare" in groups and match.group("bare") is not None):
        return match.span()
    begin, end = match.span("value" if quoted else "bare")
    if kind != GENERIC:
        return begin, end
    value = text[begin:end] if quoted else text[begin:end].rstrip(",;")
    if secretvalues.reference(value, quoted=quoted) or not (quoted or value):
        return None
    if not quoted and secretvalues.code(value) and not _SHELL.fullmatch(_line_to(text, begin)):
        return None
    strong = secretvalues.keyish if how == "key" else secretvalues.mixed
    return (begin, begin + len(value)) if strong(value) else None


# `NAME=value` from the start of its line (shell, .env, .properties): unquoted, a value
# there is a literal even when it reads like a name or code, as no language assigns a
# variable that way (an indented one is a keyword argument: `password=self.password,`).
_SHELL = re.compile(r"(?:[ \t]*export[ \t]+)?[A-Za-z_][A-Za-z0-9_.]*=")


def _line_to(text: str, at: int) -> str:
    return text[text.rfind("\n", 0, at) + 1 : at]


def _stands_alone(text: str, at: int, how: str) -> bool:
    """A "word" match starts a word; a "url" match follows a scheme (postgres://); a "key"
    match starts a part of a name (API_KEY, apiKey, not monkey)."""
    if how == "word":
        return at == 0 or not (text[at - 1].isalnum() or text[at - 1] == "_")
    if how == "url":
        return bool(_SCHEME.search(text, max(0, at - 21), at))
    if how == "key":
        return at == 0 or not (text[at].islower() and text[at - 1].isalnum())
    return True


def _key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class _Scans:
    """The last `size` scans by content hash; a clean text costs its key only.

    Not `functools.lru_cache`: it keys by the arguments, so it would keep every scanned
    text (whole files, each version of them) alive until it is pushed out."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[bytes, _Scan] = OrderedDict()
        self._lock = Lock()

    def get(self, key: bytes) -> _Scan | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: bytes, value: _Scan) -> None:
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
        if secret or secretvalues.looks_random(body) or (given and secret_name(given.group(1))):
            return match.group("quote") + ELIDED + match.group("end")
        return match.group(0)

    return _LITERAL.sub(literal, text)
