"""The working history, derived from appended rows instead of saved as a copy.

What the model sees as history is the session's finished exchanges, in order, as rewritten
by its live compactions. Nothing of it is stored twice: the exchanges are the message rows
(the answer prefixed by its turn's `toolcall_ref` lines, a user message followed by its
image reference lines), and a compaction stores the rewritten history as references
(`{"ref": message id}`) plus the few entries it made itself (a summary, an omission
marker). `derive` applies the records, oldest first, each after the rows it covered.

Which turns count: a finished answer, and a stopped or interrupted one that has text or
tool calls (the same rule the turn uses when it records the exchange). Failed turns and
rolled-back messages are left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Exists, OuterRef

from contextcore.conversation.exchanges import history_entry
from contextcore.llm import Message as ChatMessage
from history.images import history_text, images_for_messages
from history.models import Compaction, Message, MessageImage

RECORDED = frozenset({Message.Status.COMPLETE})
RECORDED_IF_ANY = frozenset(
    {
        Message.Status.CANCELLED,
        Message.Status.INTERRUPTED,
        Message.Status.STREAMING,  # a reply the server died in: it shows as interrupted
    }
)


@dataclass(frozen=True)
class ToolRef:
    """A tool call of a turn, as later prompts name it (seed 001 §4.1 `toolcall_ref`)."""

    object_id: str
    tool: str
    status: str

    def line(self) -> str:
        return f"toolcall_ref id={self.object_id} tool={self.tool} status={self.status}"


def assistant_history_text(answer: str, toolcalls: Sequence[ToolRef]) -> str:
    lines = "\n".join(ref.line() for ref in toolcalls)
    return f"{lines}\n\n{answer}".strip() if lines else answer


def is_recorded(status: str, answer: str, toolcalls: int) -> bool:
    return status in RECORDED or (status in RECORDED_IF_ANY and bool(answer or toolcalls))


@dataclass
class Rows:
    """A session's exchanges as rows give them, each with the seq it ends at."""

    exchanges: list[tuple[int, list[ChatMessage]]] = field(default_factory=list)
    user_turns: int = 0  # user messages in view, for the checkpoint rhythm and the HUD


def load_rows(session_id: str) -> Rows:
    """One query for the messages (and one more only when some user message has images)."""
    rows = list(
        Message.objects.filter(
            session_id=session_id,
            system_event=False,
            rolled_back=False,
            role__in=[Message.Role.USER, Message.Role.ASSISTANT, Message.Role.TOOL],
        )
        .annotate(has_images=Exists(MessageImage.objects.filter(message_id=OuterRef("pk"))))
        .order_by("seq")
        .values_list(
            "id",
            "seq",
            "role",
            "content",
            "status",
            "turn_id",
            "pinned",
            "edit_results",
            "has_images",
        )
    )
    with_images = [r[0] for r in rows if r[2] == Message.Role.USER and r[8]]
    images = images_for_messages(with_images) if with_images else {}
    return _exchanges(rows, images)


def _exchanges(rows: Sequence[tuple], images: Mapping[str, list]) -> Rows:
    result = Rows()
    turns: dict[str, dict[str, Any]] = {}
    order: list[dict[str, Any]] = []
    for pk, seq, role, content, status, turn_id, pinned, edits, _ in rows:
        if role == Message.Role.USER:
            result.user_turns += 1
        key = turn_id or f"seq:{seq}"
        turn = turns.get(key)
        if turn is None:
            turn = turns[key] = {"user": None, "assistant": None, "tools": [], "seq": seq}
            order.append(turn)
        turn["seq"] = max(turn["seq"], seq)
        if role == Message.Role.TOOL:
            detail = (edits or [{}])[0]
            turn["tools"].append(
                ToolRef(
                    detail.get("object_id", ""), detail.get("tool", ""), detail.get("status", "")
                )
            )
            continue
        entry = history_entry({"role": role, "content": content, "id": pk, "pinned": pinned})
        if role == Message.Role.USER:
            entry["content"] = history_text(content, images.get(pk, []))
        turn[role] = (entry, status)
    for turn in order:
        result.exchanges.extend(_entries(turn))
    return result


def _entries(turn: Mapping[str, Any]) -> list[tuple[int, list[ChatMessage]]]:
    user, assistant, tools = turn["user"], turn["assistant"], turn["tools"]
    if user is not None and assistant is not None:
        (question, _), (answer, status) = user, assistant
        if not is_recorded(status, answer["content"], len(tools)):
            return []
        answer = {**answer, "content": assistant_history_text(answer["content"], tools)}
        return [(turn["seq"], [question, answer])]
    # Rows without a turn (imported, or from before turns had ids) stand on their own.
    lone = user or assistant
    if lone is not None and not tools and lone[1] == Message.Status.COMPLETE and lone[0]["content"]:
        return [(turn["seq"], [lone[0]])]
    return []


def live_compactions(session_id: str) -> list[Compaction]:
    return list(
        Compaction.objects.filter(session_id=session_id, undone_at=None)
        .order_by("id")
        .only("id", "after", "upto_seq", "history_after", "created_at")
    )


def derive(rows: Rows, compactions: Iterable[Compaction]) -> list[ChatMessage]:
    """The working history: the exchanges, each live compaction applied after the rows it
    covered (records from before references existed replace everything before them)."""
    history: list[ChatMessage] = []
    exchanges = rows.exchanges
    position = 0
    for record in compactions:
        if record.after is None:  # an old record: its full history stands for what preceded
            history = [history_entry(m) for m in record.history_after]
            position = _skip_covered(exchanges, history)
            continue
        upto = record.upto_seq if record.upto_seq is not None else -1
        while position < len(exchanges) and exchanges[position][0] <= upto:
            history.extend(exchanges[position][1])
            position += 1
        history = expand(record.after, history)
    for _, entries in exchanges[position:]:
        history.extend(entries)
    return history


def _skip_covered(exchanges: Sequence[tuple[int, list[ChatMessage]]], history) -> int:
    """After an old full-copy record: the exchanges it already holds are not added again."""
    held = {m.get("id") for m in history if m.get("id")}
    position = 0
    for index, (_, entries) in enumerate(exchanges):
        if any(e.get("id") in held for e in entries):
            position = index + 1
    return position


def as_refs(history: Sequence[ChatMessage], known: Sequence[ChatMessage]) -> list[dict]:
    """A rewritten history to store: an entry the rows give back exactly becomes a
    reference; anything else (a summary, a marker, a cut message) is kept in full."""
    by_id = {m["id"]: m for m in known if m.get("id")}
    stored: list[dict] = []
    for message in history:
        same = by_id.get(message.get("id", ""))
        if same is not None and _unpinned(same) == _unpinned(message):
            stored.append({"ref": message["id"]})
        else:
            stored.append(dict(message))
    return stored


def expand(stored: Sequence[Mapping[str, Any]], known: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The inverse of `as_refs`; a reference to a message no longer in view is dropped."""
    by_id = {m["id"]: m for m in known if m.get("id")}
    history = []
    for item in stored:
        if "ref" in item:
            if item["ref"] in by_id:
                history.append(dict(by_id[item["ref"]]))
        else:
            history.append(history_entry(item))
    return history


def _unpinned(message: Mapping[str, Any]) -> dict:
    return {k: v for k, v in message.items() if k != "pinned"}
