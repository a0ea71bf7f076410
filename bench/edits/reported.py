"""The edits corpus's cases that went wrong in use (issue 42), built as `bench.edits.cases`
builds the rest: over one file written after requests' auth and utils code that holds a
typographic character (a non-breaking space in a comment) beside ASCII quotes in code,
and docstrings with literal `...` lines. The model quotes the code with curly quotes (the
file's ASCII must be written), and quotes a docstring's `...` line, alone or after a real
elision (text, not a marker). Expectations by splicing lines, never by the matcher.
"""

from __future__ import annotations

from bench.edits.builder import VARIANTS, Builder, Change, curly

# A file written after requests' auth and utils code that holds a typographic character
# (a non-breaking space in a comment) and docstrings with literal `...` lines.
TYPOGRAPHIC_FILE = "requests/auth_utils.py"
TYPOGRAPHIC_TEXT = """\
\"\"\"Authentication handlers and helpers, after requests' own.\"\"\"


class HTTPDigestAuth:
    \"\"\"Attaches HTTP Digest Authentication to the given Request object.\"\"\"

    def __init__(self, username, password):
        self.username = username
        self.password = password
        self.num_401_calls = 1

    def handle_401(self, r, headers, **kwargs):
        \"\"\"Takes the given response and tries digest-auth, if needed.\"\"\"
        # See\u00a0RFC 7235: a server that refuses the credentials sends them again.
        if 'Authorization' in headers:
            return r
        s_auth = r.headers.get("www-authenticate", "")
        if "digest" in s_auth.lower() and self.num_401_calls < 2:
            self.num_401_calls += 1
        return r


def iter_slices(string, slice_length):
    \"\"\"Iterate over slices of a string.

    >>> list(iter_slices("abcd", 2))
    ['ab', 'cd']
    ...
    \"\"\"
    pos = 0
    if slice_length is None or slice_length <= 0:
        slice_length = len(string)
    while pos < len(string):
        yield string[pos : pos + slice_length]
        pos += slice_length


def stream_decode(response, chunk_size):
    decoder = codecs.getincrementaldecoder(response.encoding)(errors="replace")

    def generate():
        \"\"\"Yield the decoded chunks.

        ...
        \"\"\"
        for chunk in response.iter_content(chunk_size):
            yield decoder.decode(chunk)

    def describe():
        \"\"\"Say what is streamed.
        \"\"\"
        return f"{response.url} in chunks of {chunk_size}"

    return generate()
"""
# (first line of the window, its length, the change as (line, index in the window, or
# None for the model's line), whether the model's quote is typographic, the renderings)
_KEEP = None
REPORTED: tuple[tuple[str, int, list[tuple[str | None, int | None]], bool, tuple], ...] = (
    (
        "        # See",
        3,
        [(_KEEP, 0), ("        if 'Authorization' in headers and kwargs.get(\"retry\"):", None)]
        + [(_KEEP, 2)],
        True,
        ("plain", "tabs"),
    ),
    (
        "        # See",
        3,
        [(_KEEP, 0), (_KEEP, 1), ('            log.debug("digest: already sent")', None)]
        + [(_KEEP, 2)],
        True,
        ("crlf",),
    ),
    (
        "def iter_slices",
        6,
        [(_KEEP, 0), ('    """Iterate over slices of a string, each slice_length long.', None)]
        + [(_KEEP, k) for k in range(2, 6)],
        False,
        ("plain", "tabs"),
    ),
)


def reported(b: Builder) -> None:
    """The cases that went wrong in use (issue 42): a file whose comment holds a
    non-breaking space, quoted with the model's curly quotes in code (the file's ASCII must
    be written), and docstrings whose literal `...` line the model quotes (text, not an
    elision), in plain, CRLF and tab-indented renderings of the file."""
    lines = b.logical.setdefault(TYPOGRAPHIC_FILE, TYPOGRAPHIC_TEXT.split("\n")[:-1])
    for first, size, shape, typographic, variants in REPORTED:
        i = next(k for k, line in enumerate(lines) if line.startswith(first))
        window = lines[i : i + size]
        new: Change = [(window[k], k) if t is _KEEP else (t, None) for t, k in shape]
        quote = curly if typographic else str
        old = "".join(quote(line) + "\n" for line in window)
        new_text = "".join(quote(t) + "\n" for t, _ in new)
        for variant in variants:
            expected = b.expected(TYPOGRAPHIC_FILE, variant, i, size, new)
            b.add("reported", TYPOGRAPHIC_FILE, variant, old, new_text, expected_text=expected)
    elided_docstring(b, lines)


def elided_docstring(b: Builder, lines: list[str]) -> None:
    """The model skips the function's first lines with `...` and quotes a docstring that
    holds a literal `...` line: cut there too, the piece after it (a closing `\"\"\"`) would
    stand twice in the function and the edit be refused."""
    i = next(k for k, line in enumerate(lines) if line.startswith("def stream_decode"))
    window = lines[i : i + 8]
    changed = window[4].replace("chunks.", "chunks, as text.")
    old = [window[0], "    ...", *window[3:]]
    new = [*old[:3], changed, *old[4:]]
    for variant in VARIANTS[:3]:
        expected = b.expected(TYPOGRAPHIC_FILE, variant, i + 4, 1, [(changed, None)])
        b.add("reported", TYPOGRAPHIC_FILE, variant, *b.texts(old, new), expected_text=expected)
