"""The model's context tools (issue 5, seed 001 §3.3): read, list, grep, and the set changes.

`read_file`, `list_files` and `grep` look at the repository only: every path goes through
`chat.repo.indexing.locate` (no NUL, no `..`, nothing outside the repository, also not via
symlinks, and the repository boundary: never git's or acdc's internal folders, never a
secret-shaped file, under any spelling; listings and grep lines leave them out and they are
never discovered), outputs are capped with a note saying what was cut, and a grep pattern must be
a valid regular expression that finishes within `GREP_SECONDS`. `read_file` runs full
indexing and activates the file; paths that `list_files` and `grep` mention become
discovery stubs (`[unread]` in the metadata pool). `activate`, `deactivate`, `pin` and
`unpin` change the session's sets through `chat.repo.sessionsets`, the same functions the
file picker uses. Every call ends as a `ToolResult` (`chat.repo.tools.calls`, shared with
the edit tools); a bad call is a "fail" result whose text tells the model what was wrong,
and the turn goes on. Each call is recorded as a `toolcall` object (§5.7). Synchronous ORM
code: the turn calls it from a thread.

Non-goals: the loop that calls the model again (chat.turn.turns), rendering (templates).
"""

from __future__ import annotations

import fnmatch
import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import Field

from chat.repo import boundary, credentials, git, indexing, outlines, sessionsets
from chat.repo.repomap import builder as repomap
from chat.repo.repomap.builder import RepoMaps
from chat.repo.tools import grepping
from chat.repo.tools.calls import (
    Arguments,
    Text,
    ToolCall,
    ToolFailure,
    ToolResult,
    checked_arguments,
    display,
    function_spec,
    plain_reason,
    record,
    stored_call_id,
)
from history.models import Session

log = logging.getLogger(__name__)
MAX_OUTPUT_CHARS = 20_000
MAX_LIST_LINES = 500
MAX_GREP_LINES = 200
MAX_STUBS = 200
MAX_PATTERN_CHARS = 500
GREP_SECONDS = 5.0
SET_TOOLS = ("activate", "deactivate", "pin", "unpin")
_PATH = "path relative to the repository root"
_ID = "an object id from the context list, or a file path"


class ReadFileArguments(Arguments):
    path: Text = Field(description=_PATH)


class ListFilesArguments(Arguments):
    path: Text = Field(".", description="folder relative to the repository root; . for all")
    pattern: Text = Field("", description="glob on the file name or path")


class GrepArguments(Arguments):
    pattern: Text = Field(description="regular expression")
    path: Text = Field(".", description="file or folder to search; . for all")


class ObjectArguments(Arguments):
    id: Text = Field(description=_ID)


class ActivateArguments(ObjectArguments):
    outline: bool = Field(
        False,
        description="a file only: its outline (signatures, no bodies) instead of its text",
    )


_TOOLS_ARGUMENTS: Mapping[str, tuple[str, type[Arguments]]] = MappingProxyType(
    {
        "read_file": (
            "Read a text file of the repository. It also becomes active: its current content "
            "stays in your context on later turns until you deactivate it.",
            ReadFileArguments,
        ),
        "list_files": (
            "List the repository's files below a folder (tracked and untracked, not ignored), "
            "optionally only those matching a glob pattern such as *.py.",
            ListFilesArguments,
        ),
        "grep": (
            "Search the repository's text files for a regular expression (Perl/Python "
            "syntax); answers with path:line:text lines.",
            GrepArguments,
        ),
        "outline": (
            "A source file's outline: the signatures of its classes, functions, methods, "
            "types and constants, nested, without bodies; much shorter than read_file.",
            ReadFileArguments,
        ),
        "activate": (
            "Put an object's full content into your context (a file is read fresh), or a "
            "source file's outline only (outline: true); activate again to switch.",
            ActivateArguments,
        ),
        "deactivate": (
            "Take an object's content out of your context; it stays listed as metadata.",
            ObjectArguments,
        ),
        "pin": (
            "Pin an object: it is never dropped to save room and tool outputs never collapse.",
            ObjectArguments,
        ),
        "unpin": ("Remove a pin.", ObjectArguments),
    }
)
TOOL_SPECS: tuple[dict[str, Any], ...] = tuple(
    function_spec(name, description, arguments)
    for name, (description, arguments) in _TOOLS_ARGUMENTS.items()
)
TOOL_NAMES = tuple(spec["function"]["name"] for spec in TOOL_SPECS)


def run_tool(session: Session, call: ToolCall, repo: indexing.Repository, *, maps: RepoMaps):
    """Carry out one call and record it as a toolcall object; never raises for bad input.
    Outlines come from `maps`, the process's repository maps."""
    result = ToolResult(stored_call_id(call.call_id), call.name, "ok", "")
    try:
        result.args = _arguments(call)
        result.args_display = display(call.name, result.args)
        _TOOLS[call.name](session, repo, result, maps)
    except ToolFailure as exc:
        result.status, result.output = "fail", f"Error: {exc}"
    except Exception as exc:  # a bug or a refusal nobody foresaw fails this call, not the turn
        log.exception("tool %r failed unexpectedly", call.name[:60])
        result.status, result.output = "fail", f"Error: the tool failed: {plain_reason(exc)}"
        result.file_refs, result.changed_paths = [], []
    result.output = credentials.tool_output(result.output)  # recorded and sent redacted
    tool = call.name if call.name in _TOOLS else "unknown"
    record(session, result, tool=tool, args=result.args)
    return result


def _arguments(call: ToolCall) -> dict[str, Any]:
    """The call's arguments as the model wrote them, once its tool's model accepts them."""
    if call.name not in _TOOLS:
        raise ToolFailure(
            f"there is no tool {call.name[:60]!r}; use one of {', '.join(TOOL_NAMES)}"
        )
    return checked_arguments(call.arguments, _TOOLS_ARGUMENTS[call.name][1], exclude_unset=True)


def _cap(
    text: str, limit: int = MAX_OUTPUT_CHARS, what: str = "characters", found: tuple = ()
) -> str:
    """`text` as the model is shown it (redacted, with the line that says so), cut at
    `limit` characters of that: where a cut falls and what it counts say nothing of a
    redacted value, and a cut never leaves part of one. `found`: the kinds of values
    `text` holds redacted already."""
    redaction = credentials.redact(text)
    shown = redaction.text
    if len(shown) > limit:
        cut = _outside_marker(shown, limit)
        shown = f"{shown[:cut]}\n[cut: {len(shown) - cut:,} more {what}]"
    return credentials.tool_output(shown, (*found, *redaction.found))


def _outside_marker(text: str, at: int) -> int:
    """`at`, or the start of the marker it would cut through."""
    start = text.rfind(credentials.MARKER_START, max(0, at - 60), at)
    return start if start >= 0 and text.find("]", start) >= at else at


def _folder(repo: indexing.Repository, path: str) -> str:
    """A repo-relative folder or file for list/grep ("" is the whole repository)."""
    cleaned = indexing.as_written(repo, path or ".")
    if cleaned in (".", "./", "/", ""):
        return ""
    if cleaned.startswith("/") and os.path.normpath(cleaned) == str(repo.root):
        return ""
    try:
        key, _ = indexing.locate(repo, cleaned)
        if not indexing.exists(repo, key):
            raise ToolFailure(f"{git.shown(key)}: no such file or folder")
    except indexing.IndexingError as exc:
        raise ToolFailure(str(exc)) from None
    return key


def _visible(repo: indexing.Repository, paths) -> list[str]:
    """The paths the model may see: no internal path and no secret-shaped file."""
    screened = boundary.screen(paths, root=repo.root, floor=repo.secret_floor)
    return sorted(p for p in screened.kept if p not in screened.locked)


def _stubs(session: Session, repo: indexing.Repository, paths: list[str]) -> None:
    for path in paths[:MAX_STUBS]:
        try:
            indexing.discover_file(repo, path, session=session)
        except indexing.IndexingError:
            continue


def _read_file(
    session: Session, repo: indexing.Repository, result: ToolResult, maps: RepoMaps
) -> None:
    path = result.args["path"]
    try:
        indexed = indexing.index_file(repo, path, session=session)
    except indexing.IndexingError as exc:
        raise ToolFailure(str(exc)) from None
    if indexed.deleted:
        raise ToolFailure(f"{git.short(path)}: no such file")
    content = indexed.version.content or ""
    shown = sessionsets.display_path(indexed.object, repo)
    result.file_refs = [indexed.object.id]
    result.changed_paths = [shown]
    note = "" if content else "(the file is empty)"
    result.output = f"{git.shown(shown)} (id={indexed.object.id}, now active)\n" + (
        _cap(content) if content else note
    )


def _list_files(
    session: Session, repo: indexing.Repository, result: ToolResult, maps: RepoMaps
) -> None:
    below = _folder(repo, result.args.get("path", "."))
    pattern = result.args.get("pattern", "")
    listing = git.list_files(repo.root, below)
    paths, undecodable = _visible(repo, listing.paths), listing.undecodable
    if pattern:
        paths = [
            p
            for p in paths
            if fnmatch.fnmatch(p, pattern) or fnmatch.fnmatch(Path(p).name, pattern)
        ]
    _stubs(session, repo, paths)
    lines = [git.shown(p) for p in paths[:MAX_LIST_LINES]]
    notes = []
    if len(paths) > len(lines):
        notes.append(f"[cut: {len(paths) - len(lines):,} more files; narrow the path or pattern]")
    if undecodable:
        notes.append(f"[{undecodable} names that are not valid UTF-8 were left out]")
    if not paths:
        notes.append("(no files match)")
    result.output = "\n".join([*lines, *notes])


def _grep(session: Session, repo: indexing.Repository, result: ToolResult, maps: RepoMaps) -> None:
    pattern = result.args["pattern"]
    if not pattern:
        raise ToolFailure("the pattern is empty")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ToolFailure(f"the pattern is too long (at most {MAX_PATTERN_CHARS} characters)")
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ToolFailure(f"not a valid regular expression: {exc}") from None
    below = _folder(repo, result.args.get("path", "."))
    try:
        found = grepping.search(
            repo, pattern, below, seconds=GREP_SECONDS, visible=lambda p: _visible(repo, p)
        )
    except git.GrepFailed as exc:
        raise ToolFailure(str(exc)) from None
    visible = set(_visible(repo, {path for path, _, _ in found.lines}))
    lines = [(path, number, text) for path, number, text in found.lines if path in visible]
    _stubs(session, repo, list(dict.fromkeys(path for path, _, _ in lines)))
    shown = [f"{git.shown(path)}:{number}:{text}" for path, number, text in lines]
    notes = []
    if len(shown) > MAX_GREP_LINES:
        notes.append(f"[cut: {len(shown) - MAX_GREP_LINES:,} more matching lines]")
    if found.undecodable:
        notes.append(f"[{found.undecodable} names that are not valid UTF-8 were left out]")
    text = "\n".join(shown[:MAX_GREP_LINES] + notes)
    kinds = found.redacted_kinds(lines[:MAX_GREP_LINES])
    result.output = _cap(text, found=kinds) if text else "(no matches)"


def _outline(
    session: Session, repo: indexing.Repository, result: ToolResult, maps: RepoMaps
) -> None:
    """Signatures only; the file is neither indexed nor activated (the map's cache is)."""
    try:
        key, _ = indexing.locate(repo, result.args["path"])
        result.output = _cap(repomap.outline(repo.root, key, maps))
    except (indexing.IndexingError, ValueError) as exc:
        raise ToolFailure(str(exc)) from None


def _outline_of(repo: indexing.Repository, path: str, maps: RepoMaps) -> str:
    try:
        return outlines.text(repo.root, path, maps)
    except ValueError as exc:
        raise ToolFailure(str(exc)) from None


def _set_tool(change):
    def run(
        session: Session, repo: indexing.Repository, result: ToolResult, maps: RepoMaps
    ) -> None:
        ref = result.args["id"]
        outline = {"outline": True} if result.args.get("outline") else {}
        try:
            entry = change(session, ref, repo=repo, **outline)
        except sessionsets.SetsError as exc:
            raise ToolFailure(str(exc)) from None
        result.file_refs = [entry.object_id]
        if entry.path:
            result.changed_paths = [entry.path]
        label = git.shown(entry.path) if entry.path else entry.object_id
        state = ", ".join(
            word
            for word, on in (
                ("active", entry.active),
                ("as its outline", entry.active and entry.outline),
                ("pinned", entry.pinned),
            )
            if on
        )
        result.output = f"{label} (id={entry.object_id}): {state or 'metadata only'}"
        if change is sessionsets.activate and entry.outline:
            result.output += "\n" + _cap(_outline_of(repo, entry.path, maps))
        elif change is sessionsets.activate and entry.content:
            result.output += "\n" + _cap(entry.content)

    return run


_TOOLS = {
    "read_file": _read_file,
    "list_files": _list_files,
    "grep": _grep,
    "outline": _outline,
    "activate": _set_tool(sessionsets.activate),
    "deactivate": _set_tool(sessionsets.deactivate),
    "pin": _set_tool(sessionsets.pin),
    "unpin": _set_tool(sessionsets.unpin),
}
