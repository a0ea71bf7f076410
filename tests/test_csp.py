"""The Content-Security-Policy: on every page, and pages that need nothing it forbids (no
inline script, no event-handler attribute, no `javascript:` URL), even with hostile text in
the conversation."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.conf import settings
from django.template.loader import render_to_string

from acdc.csp import HEADER
from history import services

pytestmark = pytest.mark.django_db
TEMPLATES = Path(settings.BASE_DIR) / "templates"
HOSTILE = "<script>alert(1)</script> <img src=x onerror=alert(2)> [x](javascript:alert(3))"


class InlineCode(HTMLParser):
    """Every place in a document where a browser would run code that is not a script file."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = {name for name, _ in attrs}
        if tag == "script" and "src" not in names:
            self.found.append(f"<{tag}> without src")
        for name, value in attrs:
            if name.startswith("on") or name.startswith("hx-on"):
                self.found.append(f"<{tag} {name}=...>")
            if (value or "").strip().lower().startswith("javascript:"):
                self.found.append(f"<{tag} {name}={value!r}>")


def inline_code(html: str) -> list[str]:
    parser = InlineCode()
    parser.feed(html)
    parser.close()
    return parser.found


@pytest.fixture
def pages() -> list[str]:
    session = services.session_create(repository=str(settings.ACDC_REPO), model="acdc/fake")
    services.message_append(session=session, role="user", content=HOSTILE)
    services.message_append(session=session, role="assistant", content=HOSTILE)
    return [
        f"/s/{session.id}/",
        "/s/sess_0_000000/",
        "/history/",
        "/history/?q=alert",
        f"/history/{session.id}/",
        f"/history/{session.id}/delete/",
        "/history/sess_0_000000/",
    ]


def test_every_page_carries_the_policy_and_runs_no_inline_code(client, pages):
    for url in pages:
        response = client.get(url)
        assert response.status_code in (200, 404), url
        assert response["Content-Type"].startswith("text/html"), url
        policy = response[HEADER]
        assert "script-src 'self';" in policy and "unsafe-inline' " not in policy.split("style")[0]
        assert "frame-ancestors 'none'" in policy and "base-uri 'none'" in policy
        assert inline_code(response.content.decode()) == [], url


def test_the_policy_allows_scripts_from_this_server_only(client):
    directives = dict(
        part.strip().split(" ", 1) for part in client.get("/history/")[HEADER].split(";")
    )
    assert directives["script-src"] == "'self'"
    assert directives["default-src"] == "'self'"
    assert directives["connect-src"] == "'self'"  # CSP 3: 'self' covers ws:// and wss://
    assert "unsafe-eval" not in str(directives)


def test_no_template_holds_inline_code():
    for path in sorted(TEMPLATES.rglob("*.html")):
        assert inline_code(path.read_text()) == [], path.relative_to(TEMPLATES)


def test_the_hud_s_compact_now_button_clicks_the_tools_button_from_script():
    hud = {"quality": {"percent": 30, "parts": {}, "suggestion": "Compact.", "action": "compact"}}
    html = render_to_string("chat/_hud.html", {"hud": hud})
    assert 'data-clicks="compact-button"' in html
    assert inline_code(html) == []
    assert "[data-clicks]" in (Path(settings.BASE_DIR) / "static/acdc/chat.js").read_text()
