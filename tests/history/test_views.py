"""The history browser's pages: list, search, one session, load, rename, delete, export."""

from __future__ import annotations

import json

import pytest
from django.conf import settings

from history import services
from history.models import Session

pytestmark = pytest.mark.django_db


def _session(*contents: str, repository: str | None = None) -> Session:
    session = services.session_create(repository=repository or str(settings.ACDC_REPO))
    for index, content in enumerate(contents):
        role = "user" if index % 2 == 0 else "assistant"
        services.message_append(session=session, role=role, content=content)
    return session


def test_the_index_lists_sessions_with_title_count_and_preview(client):
    _session("How does the tokenizer work?", "It splits text.")
    html = client.get("/history/").content.decode()
    assert "How does the tokenizer work?" in html
    assert "2 messages" in html and "just now" in html
    assert '<label for="history-query">Search history</label>' in html


def test_the_index_lists_only_this_repositorys_sessions(client):
    _session("secret elsewhere", repository="/some/other/repo")
    assert "secret elsewhere" not in client.get("/history/").content.decode()


def test_the_search_box_searches_as_you_type_with_a_form_fallback(client):
    html = client.get("/history/").content.decode()
    assert 'hx-trigger="input changed delay:300ms"' in html  # typing
    assert 'hx-trigger="submit"' in html  # Enter: the form's alone, or the two race
    assert 'hx-get="/history/search/"' in html and 'action="/history/"' in html


def test_a_plain_search_renders_the_page_with_marked_hits(client):
    session = _session("Where is the lexer?", "The lexer lives in src.")
    html = client.get("/history/", {"q": "lexer"}).content.decode()
    assert "<mark>lexer</mark>" in html
    assert f"/history/{session.id}/#message-" in html


def test_an_htmx_search_returns_only_the_results(client):
    _session("Where is the lexer?")
    response = client.get("/history/search/", {"q": "LEXER"}, headers={"HX-Request": "true"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "<mark>lexer</mark>" in html and "<html" not in html


def test_a_search_without_htmx_goes_to_the_page(client):
    response = client.get("/history/search/", {"q": "lexer"})
    assert response.status_code == 302 and response["Location"] == "/history/?q=lexer"


def test_the_role_filter_narrows_the_hits(client):
    _session("widget question", "widget answer")
    html = client.get("/history/", {"q": "widget", "role": "assistant"}).content.decode()
    assert '<p class="snippet"><mark>widget</mark> answer</p>' in html
    assert '<p class="snippet"><mark>widget</mark> question</p>' not in html


@pytest.mark.parametrize(
    "query", ["x" * 10_000, '"', "((", "NEAR(a b)", "a:b", "*", "--", "<script>", "\x00"]
)
def test_hostile_queries_get_a_page_never_an_error(client, query):
    _session("an ordinary message")
    for headers in ({}, {"HX-Request": "true"}):
        response = client.get("/history/search/", {"q": query}, headers=headers, follow=True)
        assert response.status_code == 200
        assert "<script>" not in response.content.decode().split("</head>")[-1]


def test_a_very_long_query_says_it_was_cut(client):
    response = client.get("/history/", {"q": "word " * 2000})
    assert "only its first 200 characters were used" in response.content.decode()


def test_a_session_page_shows_its_messages_and_actions(client):
    session = _session("What is <b>bold</b>?", "Markdown **bold**.")
    html = client.get(f"/history/{session.id}/").content.decode()
    assert "What is &lt;b&gt;bold&lt;/b&gt;?" in html
    assert "<p>Markdown <strong>bold</strong>.</p>" in html  # rendered, as in the chat
    for name in ("Load into chat", "Rename", "Delete", "Export Markdown", "Export JSON Lines"):
        assert f">{name}</" in html


def test_a_transcript_renders_replies_like_the_chat_highlighted_and_sanitized(client):
    reply = (
        "Use it:\n\n```python\ndef greet():\n    return 1\n```\n\n"
        "<script>alert(1)</script> [x](javascript:alert(1))"
    )
    session = _session("How?", reply)
    html = client.get(f"/history/{session.id}/").content.decode()
    body = html.split("</head>")[-1]
    assert '<span class="k">def</span>' in body  # Pygments classes, styled by pygments.css
    assert "<script>alert" not in body and 'href="javascript:' not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body  # shown as text, never run


def test_an_unknown_session_is_a_clear_404_everywhere(client):
    missing = "/history/sess_0_000000/"
    for url in ("", "delete/", "export.md", "export.jsonl"):
        response = client.get(missing + url)
        assert response.status_code == 404
        assert b"No such session" in response.content
    for url in ("load/", "rename/", "delete/"):
        assert client.post(missing + url, {"title": "x"}).status_code == 404


def test_a_session_of_another_repository_is_not_shown(client):
    session = _session("theirs", repository="/some/other/repo")
    assert client.get(f"/history/{session.id}/").status_code == 404


def test_load_into_chat_needs_post_and_opens_the_chat_page(client):
    session = _session("hello")
    assert client.get(f"/history/{session.id}/load/").status_code == 405
    response = client.post(f"/history/{session.id}/load/")
    assert response.status_code == 302 and response["Location"] == f"/s/{session.id}/"


def test_a_loaded_session_becomes_the_one_the_app_opens_next(client):
    loaded = _session("older question")
    _session("newer question")
    client.post(f"/history/{loaded.id}/load/")
    assert client.get("/")["Location"] == f"/s/{loaded.id}/"


def test_rename_sets_the_title(client):
    session = _session("hello")
    response = client.post(f"/history/{session.id}/rename/", {"title": "  Tokenizer   notes "})
    assert response.status_code == 302
    session.refresh_from_db()
    assert session.title == "Tokenizer notes"


def test_rename_refuses_an_empty_or_overlong_title(client):
    session = _session("hello")
    for title in ("   ", "x" * 201):
        response = client.post(f"/history/{session.id}/rename/", {"title": title})
        assert response.status_code == 400
        assert b"A title needs 1 to 200 characters." in response.content
    session.refresh_from_db()
    assert session.title == "hello"


def test_delete_asks_first_and_deletes_only_on_post(client):
    session = _session("hello", "hi")
    confirm = client.get(f"/history/{session.id}/delete/")
    assert confirm.status_code == 200
    assert (
        b"Delete this session?" in confirm.content
        and b">Delete session</button>" in confirm.content
    )
    assert Session.objects.filter(pk=session.id).exists()
    response = client.post(f"/history/{session.id}/delete/")
    assert response.status_code == 302 and response["Location"] == "/history/"
    assert not Session.objects.filter(pk=session.id).exists()


def test_writes_need_the_csrf_token(client):
    from django.test import Client

    session = _session("hello")
    strict = Client(enforce_csrf_checks=True)
    for url in ("load/", "rename/", "delete/"):
        assert strict.post(f"/history/{session.id}/{url}", {"title": "x"}).status_code == 403
    assert Session.objects.filter(pk=session.id).exists()


def test_export_downloads_markdown_and_json_lines(client):
    session = _session("hello", "hi")
    markdown = client.get(f"/history/{session.id}/export.md")
    assert markdown["Content-Disposition"] == f'attachment; filename="{session.id}.md"'
    assert markdown.content.decode().startswith("# hello")
    jsonl = client.get(f"/history/{session.id}/export.jsonl")
    assert jsonl["Content-Disposition"] == f'attachment; filename="{session.id}.jsonl"'
    records = [json.loads(line) for line in jsonl.content.decode().splitlines()]
    assert [r["content"] for r in records] == ["hello", "hi"]


def test_the_chat_page_links_to_history(client):
    session = _session("hello")
    html = client.get(f"/s/{session.id}/").content.decode()
    assert '<a class="history-link" href="/history/">History</a>' in html


def test_thumbnails_show_in_the_session_and_in_search_hits(client):
    from history.models import Image, MessageImage

    session = _session("diagram of the pipeline")
    image = Image.objects.create(
        sha256="d" * 64, mime="image/png", width=1, height=1, size=1, data=b"x", thumbnail=b"y"
    )
    MessageImage.objects.create(message=session.messages.get(), image=image)
    thumb = f'<img src="/images/{"d" * 64}/thumb/"'
    assert thumb in client.get(f"/history/{session.id}/").content.decode()
    assert thumb in client.get("/history/", {"q": "pipeline"}).content.decode()


def test_the_search_fragment_answers_from_memory_when_the_store_fails(client, served):
    from django.db import DatabaseError, connection

    served.histories.remember("sess_9_abcdef", str(settings.ACDC_REPO), "Kept in memory", [
        {"role": "assistant", "content": "The wombat module parses tokens.", "id": "m9"},
    ])  # fmt: skip

    def broken(execute, sql, params, many, context):
        raise DatabaseError("the store is unavailable")

    with connection.execute_wrapper(broken):
        response = client.get("/history/search/", {"q": "wombat"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<mark>wombat</mark>" in html and "Kept in memory" in html
