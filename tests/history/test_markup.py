from __future__ import annotations

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
