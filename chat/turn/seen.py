"""What the model saw instead of (or beside) the history, per reply (issue 12 item 9).

With Endless mode on, a turn's history is replaced by a managed summary; with related
context on, earlier summaries and pinned notes are offered beside it. Each reply shows
either in a collapsible note. The live turn builds the note from what it prepared; a
reload builds the same note from the stored rows: the turn's `ManagedView` (Endless) and
its `TokenUsage.related` (related context, stored as sent), one query each for a page.

Non-goals: choosing the items or building the summary (`chat.session.setchanges`, `endless`).
"""

from __future__ import annotations

from collections.abc import Iterable
from types import MappingProxyType
from typing import Any

from history.grounding import RelatedItem
from history.models import ManagedView, Session, TokenUsage

KIND_LABELS = MappingProxyType({"pinned": "Pinned note", "summary": "Earlier summary"})


def related_rows(items: Iterable[RelatedItem]) -> list[dict[str, Any]]:
    """The related items as stored with the turn's usage row: what was sent, with where
    it came from (the session's title as it read then) and how relevant it was judged."""
    items = list(items)
    titles = dict(
        Session.objects.filter(pk__in={i.session_id for i in items}).values_list("id", "title")
    )
    return [
        {
            "kind": item.kind,
            "text": item.text,
            "session_id": item.session_id,
            "session_title": titles.get(item.session_id) or "Untitled session",
            "message_id": item.message_id,
            "relevance": item.relevance,
        }
        for item in items
    ]


def note(
    *,
    template: str = "",
    template_source: str = "",
    summary: str = "",
    related: Iterable[dict[str, Any]] = (),
) -> dict[str, Any] | None:
    """The note's data for a template; None when the model saw only the history."""
    shown = [
        {
            **row,
            "label": KIND_LABELS.get(row.get("kind", ""), "Related item"),
            "percent": round(float(row.get("relevance") or 0) * 100),
        }
        for row in related
    ]
    endless = {"template": template, "source": template_source, "summary": summary}
    if not summary and not shown:
        return None
    return {"endless": endless if summary else None, "related": shown}


def notes_for(session_id: str, turn_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The notes of these turns of a session, by turn id (turns without one are absent)."""
    wanted = {t for t in turn_ids if t}
    if not wanted:
        return {}
    views = {
        row["turn_id"]: row
        for row in ManagedView.objects.filter(
            session_id=session_id, turn_id__in=wanted, failed=False
        )
        .exclude(managed_prompt="")
        .order_by("created_at", "id")
        .values("turn_id", "template_name", "template_source", "managed_prompt")
    }
    related = {
        turn_id: rows
        for turn_id, rows in TokenUsage.objects.filter(
            session_id=session_id, turn_id__in=wanted
        ).values_list("turn_id", "related")
        if rows
    }
    notes = {}
    for turn_id in wanted:
        view = views.get(turn_id, {})
        made = note(
            template=view.get("template_name", ""),
            template_source=view.get("template_source", ""),
            summary=view.get("managed_prompt", ""),
            related=related.get(turn_id, []),
        )
        if made is not None:
            notes[turn_id] = made
    return notes
