from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from history.markup.render import render_markdown


def test_it_renders_markdown():
    html = render_markdown("# Title\n\nSome **bold** text.")
    assert "<h1>Title</h1>" in html
    assert "<strong>bold</strong>" in html


def test_it_highlights_fenced_code():
    html = render_markdown("```python\ndef f():\n    return 1\n```")
    assert '<span class="k">def</span>' in html


def test_no_script_survives():
    html = render_markdown(
        "<script>alert(1)</script>\n\n[x](javascript:alert(1))\n\n<img src=x onerror=alert(1)>"
    )
    assert "<script" not in html
    assert 'href="javascript' not in html
    assert "<img" not in html


def test_links_get_safe_rel():
    html = render_markdown("[docs](https://example.org)")
    assert 'rel="noopener noreferrer nofollow"' in html


def test_the_commonest_kinds_of_file_get_their_highlighters_compiled_before_any_reply():
    """In a new process (the compiled rules live on the lexer's class for its lifetime)."""
    script = (
        "from pygments.lexers.python import PythonLexer\n"
        "from pygments.lexers.javascript import JavascriptLexer\n"
        "from history.markup.render import warm_lexers\n"
        "from history.markup import syntax\n"
        "assert '_tokens' not in vars(PythonLexer)\n"
        "assert syntax._compiled.cache_info().currsize == 0\n"
        "paths = ['a.py', 'b/c.py', 'd.PY', 'e.js', 'f.js', 'Makefile', 'g.weird', 'h.toml']\n"
        "print(warm_lexers(paths, most=2))\n"
        "assert '_tokens' in vars(PythonLexer) and '_tokens' in vars(JavascriptLexer)\n"
        "assert syntax._compiled.cache_info().currsize == 2\n"  # their highlight queries
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["['python',", "'javascript']"]
