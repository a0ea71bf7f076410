"""The conversation as the chat page shows it: the working history, with the rest folded.

Messages a live compaction replaced, and messages a rollback set aside, are not gone (the
store keeps them, search finds them); on the page each run of them folds into one
collapsed block ("12 earlier messages compacted"), so what is in view is what the model
sees next. An exchange a Retry replaced folds as an earlier attempt, not as a rollback, and
only the newest exchange's failed, interrupted or stopped reply offers Retry. Other
versions of a message (Regenerate, Edit) are not folded in: a ‹ n/m › switcher brings
them, under the message for its wordings (Edit) and under the reply for the answers to
the wording shown (Regenerate). A reply's tool
cards sit in its body where the model called the tools (the offset stored with each call),
as the live reply drew them. Used for the
first render and to re-render the list after a compaction (`render_session_event`, which
also draws the compaction status).
"""

from __future__ import annotations

from itertools import groupby
from types import MappingProxyType
from typing import Any

from django.template.loader import render_to_string

from chat.session import live_turn
from chat.turn import seen
from chat.turn.branches import versions
from chat.turn.branches.retry import RETRYABLE
from chat.turn.events import CompactionStarted, SessionEvent, ToolCallFinished
from chat.web import approval_cards, proposals
from chat.web.fragments import card, render_hud
from history import selectors
from history.images import images_for_messages
from history.markup.render import render_markdown as render
from history.markup.rendered import RenderedReplies
from history.models import Message, Session

# The replies Retry is offered on (the newest exchange's only, see `_retry_questions`).
FOLD_LABELS = MappingProxyType(
    {
        "compacted": "compacted: replaced by a summary in what the model sees",
        "rolled_back": "set aside by a rollback",
        "edited": "set aside when the message was edited and sent again",
        "set_aside": "set aside",
        "retried": "of an earlier attempt, replaced by Retry",
    }
)
# The notes a rollback and an edit-and-resend leave right after what they set aside
# (chat.session.checkpoints): the fold under them says which of the two it was.
SET_ASIDE_NOTES = MappingProxyType(
    {
        "Rolled back to checkpoint": "rolled_back",
        "Your last message was edited": "edited",
    }
)


def _fold_reason(message: Message, replaced: set[str], causes: dict[str, str]) -> str:
    if message.rolled_back:
        return causes.get(message.id, "set_aside")
    if message.id in replaced:
        return "compacted"
    return ""


def set_aside_causes(rows: list[Message]) -> dict[str, str]:
    """What set each set-aside message aside, by its id: the note a rollback or an edit
    and resend left after it (nothing in view between), else plain "set_aside"; Retry is
    told apart afterwards (`retried_ids`), versions are not folded at all."""
    causes: dict[str, str] = {}
    cause = "set_aside"
    for m in reversed(rows):
        if m.rolled_back:
            causes[m.id] = cause
        elif m.system_event:
            cause = next((c for p, c in SET_ASIDE_NOTES.items() if m.content.startswith(p)), cause)
        else:
            cause = "set_aside"
    return causes


def _tool_card(message: Message) -> dict[str, Any]:
    """A stored tool call as the card the live turn showed."""
    details = (message.edit_results or [{}])[0]
    event = ToolCallFinished(
        turn_id=message.turn_id,
        call_id=details.get("call_id") or message.id,
        tool=details.get("tool", "tool"),
        args_display=details.get("args", ""),
        status=details.get("status", "ok"),
        output=details.get("shown") or message.content,  # a command's, with its colours
        object_id=details.get("object_id", ""),
    )
    drawn = card(event)
    if "proposal" in details:  # as the person answered it since
        drawn["proposal"] = proposals.of_id(details["proposal"])
    elif "approval" in details:  # an MCP tool's call, as the person answered it
        drawn["proposal"] = approval_cards.of_id(details["approval"])
    return drawn


def reply_html(
    text: str, cards: list[tuple[int, dict[str, Any]]], replies: RenderedReplies | None = None
) -> str:
    """A reply's body: its markdown with each tool card at the offset where the model made
    the call (`cards` as (offset, card), in call order), so what it wrote before acting
    reads above the card. Each piece of markdown is rendered once per process (the served
    object's `replies`), so a redraw renders only what changed."""
    render_markdown = replies.render if replies is not None else render
    if not cards:
        return render_markdown(text)
    parts, start = [], 0
    for at, drawn in sorted(cards, key=lambda pair: pair[0]):  # stable: call order kept
        at = min(max(at, start), len(text))
        if text[start:at].strip():
            parts.append(render_markdown(text[start:at]))
        parts.append(render_to_string("chat/_tool_card.html", {"card": drawn}))
        start = at
    if text[start:].strip():
        parts.append(render_markdown(text[start:]))
    return "".join(parts)


def _absorbed_cards(rows: list[Message], live: str | None) -> dict[str, list]:
    """Per turn whose reply is drawn (stored or live), its tool calls as (offset, card)
    for `reply_html`; a call stored before acdc kept offsets sits at the top."""
    drawn = {m.turn_id for m in rows if m.role == Message.Role.ASSISTANT and m.turn_id}
    drawn.add(live or "")
    cards: dict[str, list] = {}
    for m in rows:
        if m.role == Message.Role.TOOL and m.turn_id and m.turn_id in drawn:
            at = int((m.edit_results or [{}])[0].get("at") or 0)
            cards.setdefault(m.turn_id, []).append((at, _tool_card(m)))
    return cards


def conversation_items(
    session: Session, retrying: str = "", replies: RenderedReplies | None = None
) -> list[dict[str, Any]]:
    """The page's entries; the reply of a turn still running is drawn as the live one the
    stream appends to (a placeholder when it has stored nothing yet)."""
    rows = selectors.session_messages(session=session)
    hidden = versions.hidden_ids(rows)  # other versions: the switcher shows them, no fold
    found = versions.version_map(rows)
    causes = set_aside_causes(rows)
    retried = retried_ids(rows, causes) | {m.id for m in rows if retrying and m.turn_id == retrying}
    causes |= dict.fromkeys(retried, "retried")
    rows = [m for m in rows if m.id not in hidden]
    live = live_turn(session)
    cards = _absorbed_cards(rows, live)
    rows = [m for m in rows if not (m.role == Message.Role.TOOL and m.turn_id in cards)]
    switchers = _switchers(rows, found)
    replaced: set[str] = set()
    for ids in session.compactions.filter(undone_at=None).values_list("replaced_ids", flat=True):
        replaced.update(ids)
    images = images_for_messages(m.id for m in rows if m.role == "user")
    questions = _retry_questions(rows)
    notes = seen.notes_for(session.id, (m.turn_id for m in rows if m.role == "assistant"))
    items: list[dict[str, Any]] = []
    for reason, run in groupby(rows, key=lambda m: _fold_reason(m, replaced, causes)):
        entries = [
            {
                "message": m,
                "html": reply_html(m.content, cards.get(m.turn_id, []), replies)
                if m.role == "assistant"
                else "",
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
        _mark_live(items, live, reply_html("", cards.get(live, [])))
    return items


def _switchers(rows: list[Message], found: dict) -> dict[str, versions.Version]:
    """Where each ‹ n/m › sits: the wordings' under the question (Edit), the replies' to
    the wording shown under its reply (Regenerate)."""
    replies = {
        m.turn_id: m.id for m in rows if m.role == Message.Role.ASSISTANT and not m.rolled_back
    }
    placed: dict[str, versions.Version] = {}
    for m in rows:
        switchers = found.get(m.id)
        if switchers is None:
            continue
        if switchers.question is not None:
            placed[m.id] = switchers.question
        reply = replies.get(m.turn_id)
        if switchers.reply is not None and reply:
            placed[reply] = switchers.reply
    return placed


def retried_ids(rows: list[Message], causes: dict[str, str]) -> set[str]:
    """The ids of set-aside exchanges that a Retry replaced: a set-aside question whose
    reply did not complete, followed by the same question, in the working history, itself
    retried (a reply retried twice), or set aside since by something else (a version made
    of it, an edit and resend, a rollback: `causes`). `rows` holds hidden versions too."""
    users = [m for m in rows if m.role == Message.Role.USER and not m.system_event]
    status = {m.turn_id: m.status for m in rows if m.role == Message.Role.ASSISTANT}
    turns: set[str] = set()
    for question, after in reversed(list(zip(users, users[1:], strict=False))):
        later = bool(after.branch_path) or causes.get(after.id) in ("rolled_back", "edited")
        followed = not after.rolled_back or later or after.turn_id in turns
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


def _mark_live(items: list[dict[str, Any]], turn_id: str, cards_html: str) -> None:
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
        items.append({"live": turn_id, "placeholder": True, "html": cards_html})


def render_conversation(
    session: Session,
    *,
    oob: bool = False,
    retrying: str = "",
    replies: RenderedReplies | None = None,
) -> str:
    """The whole message list, as an out-of-band frame when `oob`; the exchange of turn
    `retrying` folds as replaced by Retry."""
    items = conversation_items(session, retrying, replies)
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


def conversation_frame(session_id: str, replies: RenderedReplies | None = None) -> str:
    return render_conversation(Session.objects.get(pk=session_id), oob=True, replies=replies)


def retry_frame(session_id: str, turn_id: str, replies: RenderedReplies | None = None) -> str:
    """The conversation with the retried exchange folded as such (its question is not yet
    asked again, so the page could not tell it from a rollback)."""
    return render_conversation(
        Session.objects.get(pk=session_id), oob=True, retrying=turn_id, replies=replies
    )


def ended_frame(session_id: str) -> str:
    """The conversation drawn again with Stop off: for tabs that saw a reply streaming."""
    stop = render_to_string("chat/_stop_button.html", {"streaming": False, "oob": True})
    return conversation_frame(session_id) + stop
