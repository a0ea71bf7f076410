"""The session's object sets in the engine (seed 001 §4.1–4.3), before each request.

`sync_sets` makes a turn's `ContextManager` show what the sets say, in three steps: it
reads (the sets, the turns, the outlines from disk), plans in plain Python (`plan_sets`:
keep, drop, notices; no database) and applies once (`apply_plan`): active files (or their
outline, when active as one) and active tool outputs as content blocks, the whole metadata
pool as lines, pins exempt from shedding, tool outputs past the collapse window
deactivated, and the project instructions the session sends. `release_dropped` takes
files the engine had to shed (or could not read) out of the active set, so the Files
panel shows what the prompt holds. Sessions from before the sets adopt the engine's old
selection once.
"""

from __future__ import annotations

import contextlib
import hashlib
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from django.conf import settings

from chat.repo import indexing, instructions, outlines, sessionsets
from chat.repo.repomap.builder import RepoMaps
from contextcore import objectview
from contextcore.manager import ContextManager
from history.models import Message, Session


@dataclass(frozen=True)
class Notice:
    text: str
    level: str = "info"
    paths: tuple[str, ...] = ()


@dataclass(frozen=True)
class SetsPlan:
    """What the engine should hold and what the sets must drop, computed from the entries
    and what is held, with no database, disk or engine touched (`plan_sets`)."""

    entries: list[sessionsets.Entry]  # the sets, the collapsed tool outputs inactive
    wanted: dict[str, tuple[str, str | None]]  # prompt key -> (object id, given text)
    remove: tuple[str, ...]  # keys the engine holds and should not
    drop: tuple[str, ...]  # object ids to take out of the active set
    notices: tuple[Notice, ...]
    pinned: frozenset[str]  # prompt keys exempt from shedding
    metadata: tuple[str, ...]  # the pool as lines


@dataclass(frozen=True)
class Collapse:
    """§4.3's window and the turns it counts (the starts of the user's messages)."""

    starts: list = field(default_factory=list)
    per_turn: int = objectview.COLLAPSE_PER_TURN
    turns_back: int = objectview.COLLAPSE_TURNS_BACK


def sync_sets(
    session: Session, manager: ContextManager, maps: RepoMaps, repo: indexing.Repository
) -> tuple[list[Notice], list[sessionsets.Entry]]:
    """Make the engine show the session's object sets (seed 001 §4.1): active files and
    active tool outputs as content blocks, the whole pool as metadata lines, pins exempt
    from shedding. Applies the auto-collapse window to tool outputs first. Returns
    notices for active files that could not be read, and the entries it read. Reads
    first (the sets, the turns, the outlines from disk), plans, then applies. `repo` is
    the served repository as indexing reads it."""
    entries = sessionsets.entries(session, repo)
    if not any(e.type == "file" for e in entries) and manager.file_context.get_files():
        _adopt_engine_selection(session, manager, repo)  # a session from before the sets
        entries = sessionsets.entries(session, repo)
    collapse = Collapse(
        _turn_starts(session, entries),
        settings.ACDC_COLLAPSE_PER_TURN,
        settings.ACDC_COLLAPSE_TURNS_BACK,
    )
    outline_texts = _outline_texts(repo.root, entries, maps)
    plan = plan_sets(entries, manager.file_context.get_files(), outline_texts, collapse)
    return apply_plan(session, manager, plan, repo), plan.entries


def plan_sets(
    entries: list[sessionsets.Entry],
    held: Iterable[str],
    outline_texts: Mapping[str, str | ValueError],
    collapse: Collapse,
) -> SetsPlan:
    """The plan for `entries` against the engine's `held` keys: tool outputs outside the
    collapse window go inactive, a deleted file or one without an outline
    (`outline_texts`: its text or why there is none) leaves with a notice."""
    entries, drop = _collapsed(entries, collapse)
    wanted: dict[str, tuple[str, str | None]] = {}
    notices = []
    for entry in (e for e in entries if e.active):
        if entry.type == "file" and entry.deleted:
            drop.append(entry.object_id)
            text = f"{entry.path} left the context: the file was deleted"
            notices.append(Notice(text, "warning", (entry.path,)))
        elif entry.type == "file" and not entry.stub and entry.outline:
            found = outline_texts.get(entry.path, ValueError("not read"))
            if isinstance(found, ValueError):
                drop.append(entry.object_id)
                text = f"{entry.path} left the context: no outline ({found})"
                notices.append(Notice(text, "warning", (entry.path,)))
            else:
                wanted[entry.path] = (entry.object_id, found)
        elif entry.type == "file" and not entry.stub:
            wanted[entry.path] = (entry.object_id, None)
        elif entry.type == "toolcall":
            label = objectview.active_label(entry.object_id)
            wanted[label] = (entry.object_id, entry.content or "")
    pinned = {e.path for e in entries if e.pinned and e.type == "file"}
    pinned |= {objectview.active_label(e.object_id) for e in entries if e.pinned}
    return SetsPlan(
        entries=entries,
        wanted=wanted,
        remove=tuple(key for key in held if key not in wanted),
        drop=tuple(drop),
        notices=tuple(notices),
        pinned=frozenset(pinned),
        metadata=objectview.metadata_lines(_pool_item(e) for e in entries if e.in_pool),
    )


def apply_plan(session: Session, manager: ContextManager, plan: SetsPlan, repo) -> list[Notice]:
    """The one place the plan is written: the sets lose what it drops, the engine takes
    what it wants (a file the engine cannot read leaves the sets too, with a notice), its
    pins, the pool and the project instructions (read again: a change on disk reaches the
    next request)."""
    notices = list(plan.notices)
    if plan.drop:
        session.object_links.filter(object_id__in=plan.drop).update(active=False)
    files = manager.file_context
    for key in plan.remove:
        files.remove_file(key)
    for key, (object_id, text) in plan.wanted.items():
        if _holds(files, key, text):
            continue
        result = files.add_file(key, text)
        if not result.ok:
            sessionsets.deactivate(session, object_id, repo=repo)
            notices.append(Notice(f"{key} left the context: {result.reason}", "warning", (key,)))
    files.pinned = {key for key in files.get_files() if key in plan.pinned}
    manager.update_context_texts(metadata=plan.metadata)
    manager.instructions = instructions.load(
        repo.root, count=manager.counter.count_text, enabled=session.instructions
    )
    return notices


def _outline_texts(
    root, entries: list[sessionsets.Entry], maps: RepoMaps
) -> dict[str, str | ValueError]:
    """The outline of each file active as one, read from disk (or why there is none)."""
    found: dict[str, str | ValueError] = {}
    for entry in entries:
        if entry.active and entry.type == "file" and entry.outline:
            if entry.stub or entry.deleted:
                continue
            try:
                found[entry.path] = outlines.text(root, entry.path, maps)
            except ValueError as exc:
                found[entry.path] = exc
    return found


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


def _turn_starts(session: Session, entries: list[sessionsets.Entry]) -> list:
    """When each of the session's turns started (read only when a tool output is active)."""
    if not any(e.type == "toolcall" and e.active for e in entries):
        return []
    rows = session.messages.filter(role=Message.Role.USER, system_event=False).order_by("seq")
    return list(rows.values_list("timestamp", flat=True))


def _collapsed(
    entries: list[sessionsets.Entry], collapse: Collapse
) -> tuple[list[sessionsets.Entry], list[str]]:
    """§4.3: tool outputs outside the window (turns counted by user messages) go
    inactive; the entries as they will be, and the ids that went."""
    toolcalls = [e for e in entries if e.type == "toolcall" and e.active]
    if not toolcalls:
        return entries, []
    starts = collapse.starts
    outputs = [
        objectview.ToolOutput(e.object_id, max(bisect_right(starts, e.indexed_at) - 1, 0), e.pinned)
        for e in toolcalls
    ]
    drop = objectview.collapsed(
        outputs,
        max(len(starts) - 1, 0),
        per_turn=collapse.per_turn,
        turns_back=collapse.turns_back,
    )
    kept = [replace(e, active=False) if e.object_id in drop else e for e in entries]
    return kept, sorted(drop)


def release_dropped(
    session: Session,
    manager: ContextManager,
    entries: list[sessionsets.Entry],
    repo: indexing.Repository,
) -> None:
    """Files the engine shed (or could not read) leave the active set too, so the picker
    shows what the prompt holds. `entries` are the sets as `sync_sets` read them."""
    present = set(manager.file_context.get_files())
    for entry in entries:
        if entry.active and entry.type == "file" and not entry.stub and entry.path not in present:
            sessionsets.deactivate(session, entry.object_id, repo=repo)


def unique_notices(notices: Sequence[Any]) -> list[Any]:
    """One notice per file (the engine and the sets may both report a vanished file)."""
    seen: set[tuple[str, ...] | str] = set()
    kept = []
    for notice in notices:
        key = tuple(notice.paths) or notice.text
        if key not in seen:
            seen.add(key)
            kept.append(notice)
    return kept


@dataclass(frozen=True)
class Selection:
    """A session's choice as the server holds it."""

    active: frozenset[str]
    outlines: frozenset[str] = frozenset()
    pinned: frozenset[str] = frozenset()
    shed: frozenset[str] = frozenset()
    budget: int = 0
    suggested: frozenset[str] = frozenset()  # files the last message's suggestions are in

    def digest(self) -> str:
        """A short name for these sets: a tab holding rows drawn from other sets (the
        follower's news says which it should hold) draws them again."""
        parts: tuple[frozenset[str], ...] = (self.active, self.outlines & self.active)
        parts += (self.pinned, self.shed & self.active)
        parts += (self.suggested,) if self.suggested else ()
        text = "\n\n".join("\n".join(sorted(part)) for part in parts)
        return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
