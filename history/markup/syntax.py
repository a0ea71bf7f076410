"""Code blocks highlighted by tree-sitter, for the languages acdc has a grammar of.

Pygments lexes a code block with Python regular expressions, a few microseconds a
character: the larger part of rendering a code-heavy reply. tree-sitter parses it in C and
its grammar's highlight query names the parts, about four times faster in all, so the
languages acdc already parses for the repository map (their wheels carry the query) are
highlighted this way; every other language is still Pygments'. The captures are written
as the CSS classes of Pygments' short token names (`k`, `s`, `nf`...), so the one style
sheet colours both. Captures that no style colours (plain names, punctuation) are left
out, as Pygments' markup would only add bytes for them.

When two patterns name one node, the first one in the query wins, except that a plain
variable loses to anything more specific (the grammars disagree about which comes first).
Nodes nest, so their spans do: a string's escape inside the string's span.

Non-goals: languages without a grammar here (Pygments), injections (a language inside
another), a grammar's locals query.
"""

from __future__ import annotations

import functools
import html
import importlib
from types import MappingProxyType
from typing import Any

import tree_sitter

# A fence's language as people write it: the grammar module, its language function, and
# the highlight queries it needs (C++'s extends C's). TypeScript is not here: its wheel's
# query compiled alone crashes the process (tree-sitter 0.26), as JavaScript's compiled
# against TSX did; Pygments draws TypeScript and TSX (render.py).
_GRAMMARS: MappingProxyType[str, tuple[str, str, tuple[str, ...]]] = MappingProxyType(
    {
        "python": ("tree_sitter_python", "language", ("tree_sitter_python",)),
        "javascript": ("tree_sitter_javascript", "language", ("tree_sitter_javascript",)),
        "go": ("tree_sitter_go", "language", ("tree_sitter_go",)),
        "rust": ("tree_sitter_rust", "language", ("tree_sitter_rust",)),
        "c": ("tree_sitter_c", "language", ("tree_sitter_c",)),
        "cpp": ("tree_sitter_cpp", "language", ("tree_sitter_c", "tree_sitter_cpp")),
        "java": ("tree_sitter_java", "language", ("tree_sitter_java",)),
        "ruby": ("tree_sitter_ruby", "language", ("tree_sitter_ruby",)),
        # A snippet rarely opens with `<?php`; the PHP-only grammar reads it without one.
        "php": ("tree_sitter_php", "language_php_only", ("tree_sitter_php",)),
    }
)
_ALIASES = MappingProxyType(
    {
        "py": "python",
        "python3": "python",
        "py3": "python",
        "js": "javascript",
        "jsx": "javascript",
        "mjs": "javascript",
        "cjs": "javascript",
        "node": "javascript",
        "golang": "go",
        "rs": "rust",
        "h": "c",
        "c++": "cpp",
        "cc": "cpp",
        "cxx": "cpp",
        "hpp": "cpp",
        "rb": "ruby",
    }
)

# Capture names (and their parents: `string.special.regex` falls back to `string.special`,
# then `string`) as Pygments' classes. None: no span.
_CLASSES: MappingProxyType[str, str | None] = MappingProxyType(
    {
        "variable": None,
        "variable.parameter": None,
        "variable.builtin": "bp",
        "punctuation": None,
        "punctuation.special": "si",
        "delimiter": None,
        "keyword": "k",
        "comment": "c",
        "comment.documentation": "sd",
        "string": "s",
        "string.escape": "se",
        "escape": "se",
        "string.special": "sx",
        "string.special.regex": "sr",
        "string.special.symbol": "ss",
        "embedded": "si",
        "number": "m",
        "constant": "no",
        "constant.builtin": "kc",
        "constructor": "nc",
        "type": "nc",
        "type.builtin": "kt",
        "function": "nf",
        "function.builtin": "nb",
        "function.method.builtin": "nb",
        "property": "na",
        "attribute": "nd",
        "label": "nl",
        "tag": "nt",
        "module": "nn",
        "module.builtin": "nb",
        "operator": "o",
    }
)
_GENERIC = frozenset({"variable", "variable.parameter"})


def grammar_name(lang: str) -> str | None:
    """The grammar for a fence's language name, or None when Pygments has it."""
    name = lang.strip().lower()
    name = _ALIASES.get(name, name)
    return name if name in _GRAMMARS else None


def highlight(code: str, lang: str) -> str | None:
    """`code` as HTML spans (no wrapper), or None when `lang` has no grammar here."""
    name = grammar_name(lang)
    if name is None:
        return None
    try:
        source = code.encode()
    except UnicodeEncodeError:  # a lone surrogate (JSON lets a model send one): Pygments'
        return None
    language, query, classes = _compiled(name)
    # A parser per block (a microsecond to make): one must not be shared between threads.
    tree = tree_sitter.Parser(language).parse(source)
    spans = _spans(tree_sitter.QueryCursor(query).matches(tree.root_node), classes)
    return _markup(source, spans)


def warm(name: str) -> bool:
    """Compiles `name`'s query now (tens of milliseconds the first time); False when it
    has no grammar here."""
    found = grammar_name(name)
    if found is None:
        return False
    _compiled(found)
    return True


@functools.cache
def _compiled(name: str) -> tuple[tree_sitter.Language, tree_sitter.Query, list[tuple]]:
    """The grammar, its query, and per pattern the (capture index, class) it draws."""
    module, function, queries = _GRAMMARS[name]
    language = tree_sitter.Language(getattr(importlib.import_module(module), function)())
    source = "\n".join(importlib.import_module(q).HIGHLIGHTS_QUERY for q in queries)
    query = tree_sitter.Query(language, source)
    names = [query.capture_name(i) for i in range(query.capture_count)]
    return language, query, {n: _class_of(n) for n in names}


def _class_of(capture: str) -> str | None:
    name = capture
    while name:
        if name in _CLASSES:
            return _CLASSES[name]
        name = name.rpartition(".")[0]
    return None


def _spans(matches: list[tuple[int, dict[str, list[Any]]]], classes: dict) -> list[tuple]:
    """(start, end, class) of each node a pattern names, one per node, in document order
    with outer spans before the spans inside them."""
    chosen: dict[tuple[int, int], tuple[int, str | None]] = {}
    for pattern, captures in matches:
        for capture, nodes in captures.items():
            css = classes.get(capture)
            rank = (1 << 30) + pattern if capture in _GENERIC else pattern
            for node in nodes:
                key = (node.start_byte, node.end_byte)
                if key[0] < key[1] and (key not in chosen or rank < chosen[key][0]):
                    chosen[key] = (rank, css)
    ordered = sorted(chosen.items(), key=lambda item: (item[0][0], -item[0][1]))
    return [(start, end, css) for (start, end), (_rank, css) in ordered if css]


def _markup(source: bytes, spans: list[tuple]) -> str:
    out: list[str] = []
    open_ends: list[int] = []  # ends of the spans open around the position, innermost last
    at = 0
    for start, end, css in spans:
        while open_ends and open_ends[-1] <= start:
            at = _close(out, source, at, open_ends.pop())
        if open_ends and end > open_ends[-1]:
            continue  # crosses the span it starts in (a tree's nodes never do): no span
        out.append(_text(source, at, start))
        out.append(f'<span class="{css}">')
        open_ends.append(end)
        at = start
    while open_ends:
        at = _close(out, source, at, open_ends.pop())
    out.append(_text(source, at, len(source)))
    return "".join(out)


def _close(out: list[str], source: bytes, at: int, end: int) -> int:
    out.append(_text(source, at, end))
    out.append("</span>")
    return end


def _text(source: bytes, start: int, end: int) -> str:
    if start >= end:
        return ""
    return html.escape(source[start:end].decode("utf-8", "replace"), quote=False)
