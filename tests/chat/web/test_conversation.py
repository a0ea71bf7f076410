"""The page's conversation: compacted and rolled-back runs fold, nothing disappears."""

from __future__ import annotations

import pytest
from django.conf import settings

from chat.web.conversation import conversation_items, render_conversation
from history import services
from history.models import Compaction, Message

pytestmark = pytest.mark.django_db


def test_replaced_and_rolled_back_messages_fold_into_runs():
    session = services.session_create(repository=str(settings.ACDC_REPO))
    say = [
        services.message_append(session=session, role=role, content=f"m{n}")
        for n, role in enumerate(["user", "assistant"] * 4)
    ]
    Compaction.objects.create(
        session=session, case="summarize", replaced_ids=[say[2].id, say[3].id]
    )
    Compaction.objects.create(
        session=session, case="truncate", replaced_ids=[say[0].id], undone_at="2026-01-01T00:00Z"
    )
    Message.objects.filter(pk__in=[say[6].id, say[7].id]).update(rolled_back=True)
    services.message_append(  # as a rollback leaves it
        session=session,
        role="system",
        content="Rolled back to checkpoint “x”: 2 later messages set aside (kept in history).",
        system_event=True,
    )

    items = conversation_items(session)

    shape = [item.get("fold") or item["message"].content for item in items]
    assert shape[:6] == ["m0", "m1", "compacted", "m4", "m5", "rolled_back"]
    assert [e["message"].content for e in items[2]["entries"]] == ["m2", "m3"]
    html = render_conversation(session, oob=True)
    assert 'hx-swap-oob="outerHTML"' in html and "2 earlier messages compacted" in html
    assert "set aside by a rollback" in html and "m7" in html  # folded, never dropped


def test_a_reply_is_drawn_with_its_tool_cards_where_the_calls_were_made():
    session = services.session_create(repository=str(settings.ACDC_REPO))
    said = "Let me read app.py first."
    services.message_append(session=session, role="user", content="What?", turn_id="t1")
    call = {"tool": "read_file", "args": "read_file(path='app.py')", "status": "ok"}
    call |= {"object_id": "o1", "call_id": "c1", "at": len(said)}
    services.message_append(
        session=session, role="tool", content="def greet", turn_id="t1", edit_results=[call]
    )
    reply = said + "\n\nIt greets by name."
    services.message_append(session=session, role="assistant", content=reply, turn_id="t1")

    items = conversation_items(session)

    assert [i["message"].role for i in items] == ["user", "assistant"]  # the card is inside
    html = items[1]["html"]
    spots = [html.index(p) for p in (said, "tool-card status-ok", "It greets by name.")]
    assert spots == sorted(spots)


def test_a_redraw_renders_only_the_replies_that_changed(monkeypatch):
    from history.markup import render
    from history.markup.rendered import RenderedReplies

    replies = RenderedReplies()  # as the served object's host holds it
    runs = []
    parser = render.markdown_parser

    def counted():
        runs.append(1)
        return parser()

    monkeypatch.setattr(render, "markdown_parser", counted)  # the renderer's every run
    session = services.session_create(repository=str(settings.ACDC_REPO))
    for n in range(3):
        services.message_append(session=session, role="user", content=f"q{n}", turn_id=f"r{n}")
        services.message_append(
            session=session, role="assistant", content=f"**redraw {n}** of {session.id}"
        )

    first = render_conversation(session, oob=True, replies=replies)
    drawn = len(runs)
    assert drawn == 3 and "<strong>redraw 2</strong>" in first
    assert (
        render_conversation(session, oob=True, replies=replies) == first and len(runs) == drawn
    )  # 0 runs

    changed = Message.objects.filter(session=session, content__startswith="**redraw 1")
    changed.update(content=f"*edited* of {session.id}")
    again = render_conversation(session, oob=True, replies=replies)
    assert len(runs) == drawn + 1 and "<em>edited</em>" in again  # only that reply, again
    assert (replies.misses, replies.hits) == (4, 5)
