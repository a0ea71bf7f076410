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

    items = conversation_items(session)

    shape = [item.get("fold") or item["message"].content for item in items]
    assert shape == ["m0", "m1", "compacted", "m4", "m5", "rolled_back"]
    assert [e["message"].content for e in items[2]["entries"]] == ["m2", "m3"]
    html = render_conversation(session, oob=True)
    assert 'hx-swap-oob="outerHTML"' in html and "2 earlier messages compacted" in html
    assert "set aside by a rollback" in html and "m7" in html  # folded, never dropped
