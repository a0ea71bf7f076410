"""Code highlighted by tree-sitter: the classes the style sheet knows, the code intact."""

from __future__ import annotations

import html
import random
import re
import threading
from pathlib import Path

import pytest

from history.markup import syntax
from history.markup.render import render_markdown

CHECKOUT = Path(__file__).resolve().parents[2]
SNIPPETS = {
    "python": 'def f(x):\n    return len("a\\n")  # note\n',
    "js": 'function f(x) { return "a" + 1; } // note\n',
    "go": 'package main\nfunc f() string { return "a" } // note\n',
    "rust": 'fn f() -> u8 { let s = "a"; 1 } // note\n',
    "c": 'int f(void) { return "a"[0]; } // note\n',
    "cpp": 'class A { int f() { return "a"[0]; } }; // note\n',
    "java": 'class A { String f() { return "a"; } } // note\n',
    "ruby": 'def f(x)\n  "a" # note\nend\n',
    "php": 'function f($x) { return "a"; } // note\n',
}
_TAG = re.compile(r"<[^>]*>")


def text_of(drawn: str) -> str:
    return html.unescape(_TAG.sub("", drawn))


@pytest.mark.parametrize("lang", sorted(SNIPPETS))
def test_each_grammar_draws_keywords_strings_and_comments_in_pygments_classes(lang):
    drawn = syntax.highlight(SNIPPETS[lang], lang)
    assert drawn is not None
    for css in ("k", "s", "c"):
        assert f'<span class="{css}">' in drawn, (css, drawn)
    assert text_of(drawn) == SNIPPETS[lang]


def test_the_classes_are_those_the_style_sheet_colours():
    sheet = (CHECKOUT / "static/acdc/pygments.css").read_text()
    styled = set(re.findall(r"^\.message \.body pre \.(\w+) ", sheet, re.MULTILINE))
    drawn = {css for css in syntax._CLASSES.values() if css}
    assert drawn <= styled, drawn - styled


def test_spans_nest_and_the_code_is_escaped():
    drawn = syntax.highlight('s = f"<{a}>\\n"  # x < y & z\n', "py")
    assert drawn.count("<span") == drawn.count("</span>")
    assert "&lt;" in drawn and "&amp;" in drawn and "<{" not in drawn
    assert '<span class="s">f"&lt;<span class="si">' in drawn  # the braces inside the string
    assert text_of(drawn) == 's = f"<{a}>\\n"  # x < y & z\n'


def test_a_language_without_a_grammar_here_is_left_to_pygments():
    assert syntax.highlight("a = 1\n", "toml") is None
    assert syntax.highlight("a = 1\n", "") is None
    assert syntax.highlight("x = 1\n", "typescript") is None  # no query of its own
    assert '<span class="n">a</span>' in render_markdown("```toml\na = 1\n```")  # Pygments'


def test_a_lone_surrogate_is_left_to_pygments():
    assert syntax.highlight('x = "\ud800"\n', "python") is None
    assert "x" in render_markdown('```python\nx = "\ud800"\n```')


def test_the_renderer_draws_a_covered_language_with_tree_sitter():
    rendered = render_markdown("```py\ndef f():\n    return 1\n```")
    assert '<span class="k">def</span> <span class="nf">f</span>' in rendered
    assert 'class="w"' not in rendered  # Pygments marks white space; tree-sitter does not


def test_any_cut_of_real_code_comes_back_whole():
    """Replies stream code that stops anywhere, in every language: whatever the parser
    makes of a fragment, the text drawn is the text given, once, in order."""
    rng = random.Random(7)
    sources = [p for p in sorted((CHECKOUT / "chat").rglob("*.py")) if p.stat().st_size][:40]
    sources += sorted((CHECKOUT / "static/acdc").glob("*.js"))[:10]
    for path in sources:
        code = path.read_text()
        lang = "python" if path.suffix == ".py" else "js"
        for _ in range(3):
            start = rng.randrange(len(code))
            piece = code[start : start + rng.randrange(1, 3000)]
            drawn = syntax.highlight(piece, lang)
            assert text_of(drawn) == piece, path
            assert drawn.count("<span") == drawn.count("</span>")
    for lang, snippet in SNIPPETS.items():  # and every grammar, cut at each character
        for end in range(len(snippet)):
            assert text_of(syntax.highlight(snippet[:end], lang)) == snippet[:end]


def test_threads_highlight_at_once_and_agree():
    code = (CHECKOUT / "history/markup/syntax.py").read_text()
    expected = syntax.highlight(code, "python")
    results: list[str] = []

    def draw() -> None:
        for _ in range(5):
            results.append(syntax.highlight(code, "python"))

    threads = [threading.Thread(target=draw) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 20


@pytest.mark.parametrize("lang", ["ts", "typescript", "tsx", "mts", "cts"])
def test_typescript_and_tsx_fences_are_highlighted_by_pygments(lang):
    # The TypeScript wheel's highlight query crashes tree-sitter compiled alone: Pygments'.
    code = "export const f = (a: number): string => `${a}`; // note\n"
    if lang == "tsx":
        code += 'const e = <div className="x">{f(1)}</div>;\n'
    rendered = render_markdown(f"```{lang}\n{code}```")
    assert (
        '<span class="kd">const</span>' in rendered and '<span class="kt">number</span>' in rendered
    )
    assert '<span class="c1">// note</span>' in rendered
    assert lang != "tsx" or '<span class="nt">div</span>' in rendered
