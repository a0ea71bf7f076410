"""Model text to safe HTML: markdown, highlighted code, then a strict sanitizer.

Model output is untrusted. It is rendered with raw HTML disabled, code blocks highlighted
by Pygments (class-based, styled by our CSS), and the result cleaned by nh3 with a short
allow-list, so no script, event handler or `javascript:` URL can survive.
"""

from __future__ import annotations

from functools import cache

import nh3
from markdown_it import MarkdownIt
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

_ALLOWED_TAGS = {
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
_ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "span": {"class"},
    "div": {"class"},
    "code": {"class"},
    "th": {"align"},
    "td": {"align"},
}


def _highlight(code: str, lang: str, _attrs: str) -> str:
    try:
        lexer = get_lexer_by_name(lang.strip() or "text")
    except ClassNotFound:
        return ""  # markdown-it escapes and wraps it itself
    return highlight(code, lexer, HtmlFormatter(nowrap=True))


@cache
def markdown_parser() -> MarkdownIt:
    """The one markdown-it configuration: `blocks.py` splits answers with its block rules."""
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "highlight": _highlight})
    return md.enable("table").enable("strikethrough")


def render_markdown(text: str) -> str:
    html = markdown_parser().render(text)
    return nh3.clean(
        html,
        tags=_ALLOWED_TAGS,
        attributes=_ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
