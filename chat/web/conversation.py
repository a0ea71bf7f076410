"""The conversation as the chat page shows it: the working history, with the rest folded.

Messages a live compaction replaced, and messages a rollback set aside, are not gone (the
store keeps them, search finds them); on the page each run of them folds into one
collapsed block ("12 earlier messages compacted"), so what is in view is what the model
sees next. An exchange a Retry replaced folds as an earlier attempt, not as a rollback, and
only the newest exchange's failed, interrupted or stopped reply offers Retry. Other
versions of a message (Regenerate, Edit) are not folded in: a ‹ n/m › switcher under the
message, or under its reply when every version asks the same, brings them. Used for the
first render and to re-render the list after a compaction (`render_session_event`, which
also draws the compaction status).
"""

from __future__ import annotations

from itertools import groupby
from typing import Any

from django.template.loader import render_to_string

from chat.turn import seen
from chat.turn.branches import versions
from chat.turn.branches.retry import RETRYABLE
from chat.turn.events import CompactionStarted, SessionEvent, ToolCallFinished
from chat.turn.session import live_turn
from chat.web.fragments import card, render_hud
from history import selectors
from history.images import images_for_messages
from history.markup.render import render_markdown
from history.models import Message, Session

# The replies Retry is offered on (the newest exchange's only, see `_retry_questions`).
FOLD_LABELS = {
    "compacted": "compacted: replaced by a summary in what the model sees",
    "rolled_back": "set aside by a rollback",
    "retried": "of an earlier attempt, replaced by Retry",
}


def _fold_reason(message: Message, replaced: set[str], retried: set[str] = frozenset()) -> str:
    if message.id in retried:
        return "retried"
    if message.rolled_back:
        return "rolled_back"
    if message.id in replaced:
        return "compacted"
    return ""


def _tool_card(message: Message) -> dict[str, Any]:
    """A stored tool call as the card the live turn showed."""
    details = (message.edit_results or [{}])[0]
    event = ToolCallFinished(
        turn_id=message.turn_id,
        call_id=details.get("call_id") or message.id,
        tool=details.get("tool", "tool"),
        args_display=details.get("args", ""),
        status=details.get("status", "ok"),
        output=message.content,
        object_id=details.get("object_id", ""),
    )
    return card(event)


def conversation_items(session: Session, retrying: str = "") -> list[dict[str, Any]]:
    """The page's entries; the reply of a turn still running is drawn as the live one the
    stream appends to (a placeholder when it has stored nothing yet)."""
    rows = selectors.session_messages(session=session)
    hidden = versions.hidden_ids(rows)  # other versions: the switcher shows them, no fold
    found = versions.version_map(rows)
    rows = [m for m in rows if m.id not in hidden]
    switchers = _switchers(rows, found)
    live = live_turn(session)
    replaced: set[str] = set()
    for ids in session.compactions.filter(undone_at=None).values_list("replaced_ids", flat=True):
        replaced.update(ids)
    images = images_for_messages(m.id for m in rows if m.role == "user")
    questions = _retry_questions(rows)
    retried = retried_ids(rows) | {m.id for m in rows if retrying and m.turn_id == retrying}
    notes = seen.notes_for(session.id, (m.turn_id for m in rows if m.role == "assistant"))
    items: list[dict[str, Any]] = []
    for reason, run in groupby(rows, key=lambda m: _fold_reason(m, replaced, retried)):
        entries = [
            {
                "message": m,
                "html": render_markdown(m.content) if m.role == "assistant" else "",
                "images": [i.sha256 for i in images.get(m.id, [])],
                "card": _tool_card(m) if m.role == Message.Role.TOOL else None,
                "question": questions.get(m.turn_id, "") if m.status in RETRYABLE else "",
                "seen": notes.get(m.turn_id) if m.role == Message.Role.ASSISTANT else None,
                "version": switchers.get(m.id),
            }
            for m in run
        ]
        if reason:
            items.append({"fold": reason, "label": FOLD_LABELS[reason], "entries": entries})
        else:
            items += entries
    if live:
        _mark_live(items, live)
    return items


def _switchers(rows: list[Message], found: dict) -> dict[str, versions.Version]:
    """Where each ‹ n/m › sits: on the reply when every version asks the same question
    (Regenerate), else on the message itself (Edit)."""
    replies = {
        m.turn_id: m.id for m in rows if m.role == Message.Role.ASSISTANT and not m.rolled_back
    }
    placed: dict[str, versions.Version] = {}
    for m in rows:
        version = found.get(m.id)
        if version is not None:
            reply = replies.get(m.turn_id) if version.regenerated else None
            placed[reply or m.id] = version
    return placed


def retried_ids(rows: list[Message]) -> set[str]:
    """The ids of set-aside exchanges that a Retry replaced: a set-aside question whose
    reply did not complete, followed by the same question, in the working history or
    itself retried (a reply retried twice)."""
    users = [m for m in rows if m.role == Message.Role.USER and not m.system_event]
    status = {m.turn_id: m.status for m in rows if m.role == Message.Role.ASSISTANT}
    turns: set[str] = set()
    for question, after in reversed(list(zip(users, users[1:], strict=False))):
        followed = not after.rolled_back or after.turn_id in turns
        retried = question.rolled_back and status.get(question.turn_id) in RETRYABLE
        if retried and followed and after.content == question.content:
            turns.add(question.turn_id)
    return {m.id for m in rows if m.turn_id and m.turn_id in turns}


def _retry_questions(rows: list[Message]) -> dict[str, str]:
    """The newest exchange's question by its turn, when it is still in the working history:
    only that exchange offers Retry (an older one's would be answered at the bottom)."""
    mine = [m for m in rows if m.role == "user" and not m.system_event and not m.rolled_back]
    newest = mine[-1] if mine else None
    return {newest.turn_id: newest.content} if newest and newest.turn_id else {}


def _mark_live(items: list[dict[str, Any]], turn_id: str) -> None:
    replies = [
        item
        for item in items
        if "message" in item
        and item["message"].turn_id == turn_id
        and item["message"].role == Message.Role.ASSISTANT
    ]
    for item in replies:
        item["live"] = turn_id
    if not replies:
        items.append({"live": turn_id, "placeholder": True})


def render_conversation(session: Session, *, oob: bool = False, retrying: str = "") -> str:
    """The whole message list, as an out-of-band frame when `oob`; the exchange of turn
    `retrying` folds as replaced by Retry."""
    items = conversation_items(session, retrying)
    return render_to_string(
        "chat/_conversation.html", {"messages": items, "session": session, "oob": oob}
    )


def render_session_event(event: SessionEvent) -> str:
    """The frame for an after-turn event: the compaction status, after the conversation
    drawn again when it changed. Reads the database: call it from a thread."""
    if isinstance(event, CompactionStarted):
        return render_to_string("chat/_frame_compaction.html", {"state": "start"})
    html = ""
    if event.rerender:
        html = render_conversation(Session.objects.get(pk=event.session_id), oob=True)
        if event.hud is not None:
            html += render_hud(event.hud)
    context = {
        "state": event.state,
        "text": event.text,
        "outcome": event.outcome,
        "session_id": event.session_id,
    }
    return html + render_to_string("chat/_frame_compaction.html", context)


def conversation_frame(session_id: str) -> str:
    return render_conversation(Session.objects.get(pk=session_id), oob=True)


def retry_frame(session_id: str, turn_id: str) -> str:
    """The conversation with the retried exchange folded as such (its question is not yet
    asked again, so the page could not tell it from a rollback)."""
    return render_conversation(Session.objects.get(pk=session_id), oob=True, retrying=turn_id)


def ended_frame(session_id: str) -> str:
    """The conversation drawn again with Stop off: for tabs that saw a reply streaming."""
    stop = render_to_string("chat/_stop_button.html", {"streaming": False, "oob": True})
    return conversation_frame(session_id) + stop
