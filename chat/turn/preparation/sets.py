"""The session's object sets in the engine (seed 001 §4.1–4.3), before each request.

`sync_sets` makes a turn's `ContextManager` show what the sets say: active files (or their
outline, when active as one) and active tool outputs as content blocks, the whole metadata
pool as lines, pins exempt from shedding, tool outputs past the collapse window
deactivated, and the project instructions the session sends. `release_dropped` takes
files the engine had to shed (or could not read) out of the active set, so the Files
panel shows what the prompt holds. Sessions from before the sets adopt the engine's old
selection once.
"""

from __future__ import annotations

import contextlib
from bisect import bisect_right
from dataclasses import dataclass, replace

from django.conf import settings

from chat.repo import instructions, outlines, sessionsets
from contextcore import objectview
from contextcore.manager import ContextManager
from history.models import Message, Session


@dataclass(frozen=True)
class Notice:
    text: str
    level: str = "info"
    paths: tuple[str, ...] = ()


def sync_sets(
    session: Session, manager: ContextManager
) -> tuple[list[Notice], list[sessionsets.Entry]]:
    """Make the engine show the session's object sets (seed 001 §4.1): active files and
    active tool outputs as content blocks, the whole pool as metadata lines, pins exempt
    from shedding. Applies the auto-collapse window to tool outputs first. Returns
    notices for active files that could not be read, and the entries it read."""
    repo = sessionsets.repository()
    entries = sessionsets.entries(session, repo)
    if not any(e.type == "file" for e in entries) and manager.file_context.get_files():
        _adopt_engine_selection(session, manager, repo)  # a session from before the sets
        entries = sessionsets.entries(session, repo)
    entries = _auto_collapse(session, entries)
    wanted: dict[str, tuple[str, str | None]] = {}  # prompt key -> (object id, given text)
    notices = []
    for entry in entries:
        if not entry.active:
            continue
        if entry.type == "file" and entry.deleted:
            sessionsets.deactivate(session, entry.object_id, repo=repo)
            text = f"{entry.path} left the context: the file was deleted"
            notices.append(Notice(text, "warning", (entry.path,)))
        elif entry.type == "file" and not entry.stub and entry.outline:
            try:
                wanted[entry.path] = (entry.object_id, outlines.text(repo.root, entry.path))
            except ValueError as exc:
                sessionsets.deactivate(session, entry.object_id, repo=repo)
                text = f"{entry.path} left the context: no outline ({exc})"
                notices.append(Notice(text, "warning", (entry.path,)))
        elif entry.type == "file" and not entry.stub:
            wanted[entry.path] = (entry.object_id, None)
        elif entry.type == "toolcall":
            wanted[objectview.active_label(entry.object_id)] = (
                entry.object_id,
                entry.content or "",
            )
    files = manager.file_context
    for key in files.get_files():
        if key not in wanted:
            files.remove_file(key)
    for key, (object_id, text) in wanted.items():
        if _holds(files, key, text):
            continue
        result = files.add_file(key, text)
        if not result.ok:
            sessionsets.deactivate(session, object_id, repo=repo)
            notices.append(Notice(f"{key} left the context: {result.reason}", "warning", (key,)))
    pinned = {e.path for e in entries if e.pinned and e.type == "file"}
    pinned |= {objectview.active_label(e.object_id) for e in entries if e.pinned}
    files.pinned = {key for key in files.get_files() if key in pinned}
    manager.set_context_texts(
        repo_map=manager.repo_map,
        file_tree=manager.file_tree,
        reference=manager.reference,
        metadata=objectview.metadata_lines(_pool_item(e) for e in entries if e.in_pool),
    )
    # Read again every time, like the files: a change on disk reaches the next request.
    manager.instructions = instructions.load(
        count=manager.counter.count_text, enabled=session.instructions
    )
    return notices, entries


def _holds(files, key: str, text: str | None) -> bool:
    """The engine already holds `key` as wanted: the same given text (a tool output, an
    outline), or the file read from disk (which the engine re-reads when it changes)."""
    if text is not None:
        return files.get_content(key) == text
    return files.has_file(key) and files.from_disk(key)


def _pool_item(entry: sessionsets.Entry) -> objectview.PoolItem:
    return objectview.PoolItem(
        object_id=entry.object_id,
        type=entry.type,
        path=entry.path,
        char_count=entry.char_count,
        stub=entry.stub,
        deleted=entry.deleted,
        tool=entry.tool,
        status=entry.status,
    )


def _adopt_engine_selection(session: Session, manager: ContextManager, repo) -> None:
    sessionsets.set_active_files(session, manager.file_context.get_files(), repo=repo)
    for path in manager.file_context.pinned:
        with contextlib.suppress(sessionsets.SetsError):
            sessionsets.pin(session, path, repo=repo)


def _auto_collapse(session: Session, entries: list[sessionsets.Entry]) -> list:
    """§4.3: deactivate tool outputs outside the window (turns counted by user messages)."""
    toolcalls = [e for e in entries if e.type == "toolcall" and e.active]
    if not toolcalls:
        return entries
    starts = list(
        session.messages.filter(role=Message.Role.USER, system_event=False)
        .order_by("seq")
        .values_list("timestamp", flat=True)
    )
    outputs = [
        objectview.ToolOutput(e.object_id, max(bisect_right(starts, e.indexed_at) - 1, 0), e.pinned)
        for e in toolcalls
    ]
    drop = objectview.collapsed(
        outputs,
        max(len(starts) - 1, 0),
        per_turn=settings.ACDC_COLLAPSE_PER_TURN,
        turns_back=settings.ACDC_COLLAPSE_TURNS_BACK,
    )
    if not drop:
        return entries
    session.object_links.filter(object_id__in=drop).update(active=False)
    return [replace(e, active=False) if e.object_id in drop else e for e in entries]


def release_dropped(
    session: Session, manager: ContextManager, entries: list[sessionsets.Entry]
) -> None:
    """Files the engine shed (or could not read) leave the active set too, so the picker
    shows what the prompt holds. `entries` are the sets as `sync_sets` read them."""
    present = set(manager.file_context.get_files())
    for entry in entries:
        if entry.active and entry.type == "file" and not entry.stub and entry.path not in present:
            sessionsets.deactivate(session, entry.object_id)
