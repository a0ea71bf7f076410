"""Model text to safe HTML: markdown, highlighted code, then a strict sanitizer.

The one renderer of replies, for the chat (its stream renders each block with it) and for
History's transcript (the `markdown` filter of `history_tags`); it lives below both, so
neither reaches up the layers for it. Model output is untrusted. It is rendered with raw
HTML disabled, code blocks highlighted (by tree-sitter for the languages `syntax` has a
grammar of, by Pygments for the rest; class-based, styled by our CSS), and the result
cleaned by nh3 with a short allow-list, so no script, event handler or `javascript:` URL
can survive; no control character survives either (`contextcore.controls.printable`, with
colours too: a page draws none of the model's). Plain Python: no Django.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable
from pathlib import PurePosixPath
from types import MappingProxyType

import nh3
from markdown_it import MarkdownIt
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import find_lexer_class_for_filename, get_lexer_by_name
from pygments.util import ClassNotFound

from contextcore.controls import printable
from history.markup import syntax

_ALLOWED_TAGS = frozenset(
    {
        "a",
        "blockquote",
        "br",
        "code",
        "del",
        "div",
        "em",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "li",
        "ol",
        "p",
        "pre",
        "span",
        "strong",
        "table",
        "tbody",
        "td",
        "th",
        "thead",
        "tr",
        "ul",
    }
)
_ALLOWED_ATTRIBUTES = {
    "a": frozenset({"href", "title"}),
    "span": frozenset({"class"}),
    "div": frozenset({"class"}),
    "code": frozenset({"class"}),
    "th": frozenset({"align"}),
    "td": frozenset({"align"}),
}


def _highlight(code: str, lang: str, _attrs: str) -> str:
    drawn = syntax.highlight(code, lang)
    if drawn is not None:
        return drawn
    lexer = _lexer(lang.strip().lower() or "text")
    if lexer is None:
        return ""  # markdown-it escapes and wraps it itself
    return highlight(code, lexer, _FORMATTER)


# Made once: finding a lexer by name searches every lexer Pygments has, and a formatter
# builds its style table. Both are only read while highlighting, so threads may share them.
_FORMATTER = HtmlFormatter(nowrap=True)


# Fence names Pygments does not know as aliases: TypeScript's module suffixes.
_PYGMENTS_ALIASES = MappingProxyType({"mts": "typescript", "cts": "typescript"})


@functools.lru_cache(maxsize=64)
def _lexer(name: str) -> Lexer | None:
    try:
        return get_lexer_by_name(_PYGMENTS_ALIASES.get(name, name))
    except ClassNotFound:
        return None


def warm_lexers(paths: Iterable[str], most: int = 3) -> list[str]:
    """Makes the lexers of the `most` commonest kinds of file among `paths` (a repository's
    files), and the highlight queries of those tree-sitter draws, and returns their names.
    Pygments compiles a lexer's rules the first time one is made and tree-sitter its query,
    tens of milliseconds each; done once the map is ready at start-up, the first reply with
    code in the repository's language does not pay it while it streams."""
    suffixes = Counter(PurePosixPath(p).suffix.lower() for p in paths)
    warmed: list[str] = []
    for suffix, _count in suffixes.most_common():
        if len(warmed) >= most:
            break
        found = find_lexer_class_for_filename("x" + suffix) if suffix else None
        if found is not None and found.aliases and _lexer(found.aliases[0]) is not None:
            syntax.warm(found.aliases[0])  # its grammar's query, where tree-sitter draws it
            warmed.append(found.aliases[0])
    return warmed


@functools.cache
def markdown_parser() -> MarkdownIt:
    """The one markdown-it configuration: `blocks.py` splits answers with its block rules."""
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "highlight": _highlight})
    return md.enable("table").enable("strikethrough")


def render_markdown(text: str) -> str:
    try:
        text.encode()
    except UnicodeEncodeError:  # a lone surrogate, which the sanitizer cannot take: U+FFFD
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    html = markdown_parser().render(printable(text, colours=False))
    return nh3.clean(
        html,
        tags=_ALLOWED_TAGS,
        attributes=_ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
