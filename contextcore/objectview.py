"""How a session's content objects read in the prompt (seed 001 §4.1–4.3): pure functions.

The metadata pool becomes one line per object (`[unread]` for a stub, so an empty file
and an unread one differ); an active object becomes a content block labelled
`ACTIVE_CONTENT id=…`; tool calls in the chat history are `toolcall_ref` lines (written by
the turn); and the auto-collapse window says which tool outputs fall out of the active
set. Where these go in the prompt, and how they are cached, is the assembler's business.
Non-goals: storage (chat.repo.sessionsets) and the tools themselves (chat.repo.tools).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from contextcore.paths import shown

ACTIVE_PREFIX = "ACTIVE_CONTENT id="
COLLAPSE_PER_TURN = 5
COLLAPSE_TURNS_BACK = 3


@dataclass(frozen=True)
class PoolItem:
    """What the metadata line of one object needs."""

    object_id: str
    type: str  # "file" | "toolcall"
    path: str = ""
    char_count: int | None = None
    stub: bool = False
    deleted: bool = False
    tool: str = ""
    status: str = ""


def metadata_line(item: PoolItem) -> str:
    """§4.1: `id=… type=file path=… file_type=… char_count=…` (or `[unread]`), or the
    toolcall form. A deleted file says so instead of pretending to be empty."""
    if item.type == "toolcall":
        return f"id={item.object_id} type=toolcall tool={item.tool} status={item.status}"
    file_type = PurePosixPath(item.path).suffix[1:]
    path = shown(item.path, spaces=True)
    head = f"id={item.object_id} type=file path={path} file_type={file_type}"
    if item.deleted:
        return f"{head} [deleted]"
    if item.stub or item.char_count is None:
        return f"{head} [unread]"
    return f"{head} char_count={item.char_count}"


MAX_UNREAD_LINES = 40


def metadata_lines(
    items: Iterable[PoolItem], max_unread: int = MAX_UNREAD_LINES
) -> tuple[str, ...]:
    """One line per object, except that only the newest `max_unread` unread stubs are
    listed (a grep can name hundreds of paths; each line is paid for on every turn) and a
    last line counts the rest."""
    items = list(items)
    unread = [i for i in items if i.type == "file" and i.stub and not i.deleted]
    hidden = {id(i) for i in unread[: max(0, len(unread) - max_unread)]}
    lines = [metadata_line(i) for i in items if id(i) not in hidden]
    if hidden:
        lines.append(
            f"[{len(hidden)} older unread paths not listed; list_files or grep finds them again]"
        )
    return tuple(lines)


def active_label(object_id: str) -> str:
    """The key an active non-file object takes among the prompt's content blocks."""
    return f"{ACTIVE_PREFIX}{object_id}"


def is_active_label(key: str) -> bool:
    return key.startswith(ACTIVE_PREFIX)


@dataclass(frozen=True)
class ToolOutput:
    object_id: str
    turn: int  # 0-based index of the turn that made it
    pinned: bool = False


def collapsed(
    outputs: Sequence[ToolOutput],
    current_turn: int,
    *,
    per_turn: int = COLLAPSE_PER_TURN,
    turns_back: int = COLLAPSE_TURNS_BACK,
) -> set[str]:
    """§4.3 sliding window: the ids of tool outputs to deactivate. Kept: the newest
    `per_turn` outputs of each of the last `turns_back` turns (the current one included).
    Pinned outputs are never collapsed. `outputs` is in creation order."""
    drop: set[str] = set()
    kept_per_turn: dict[int, int] = {}
    for output in reversed(outputs):
        if output.pinned:
            continue
        if current_turn - output.turn >= turns_back:
            drop.add(output.object_id)
            continue
        kept = kept_per_turn.get(output.turn, 0)
        if kept >= per_turn:
            drop.add(output.object_id)
        else:
            kept_per_turn[output.turn] = kept + 1
    return drop
