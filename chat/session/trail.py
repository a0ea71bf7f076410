"""The session's artifact trail, read from what the store already holds.

The rows are the source, so no turn writes anything for it: the edits acdc applied
(`PendingEdit`, applied or undone since, with the lines it added and removed), the
commands run (`CommandRun`: the declared name, the exit status, the failing tests'
names as the check's output cut ranks them) and the pinned messages. Each artifact
names its turn, counted as the page counts the person's messages. `refresh` hands the
text to the engine (`contextcore.conversation.artifacts`) whenever the request's history
was cut: a live compaction or truncation record, an Endless view, or a truncation the
next request will make; otherwise the trail stays out (the history itself holds it).
Non-goals: the trail's bound and shape (contextcore's), where it goes in the request.
"""

from __future__ import annotations

import difflib
import re
from bisect import bisect_right
from collections.abc import Sequence
from datetime import datetime

from django.db.models.functions import Substr

from chat.repo.commands.failures import NAME, ranked
from chat.session.context import SessionContext
from contextcore.conversation.artifacts import CHANGED, FAILED, PASSED, PINNED, Artifact, render
from contextcore.llm import Message as ChatMessage
from history.models import CommandRun, Message, PendingEdit

NAMES_SHOWN = 3  # failing tests named on a command's line; the rest are counted
PINNED_CHARS = 300  # of a pinned message read (its line shows fewer)
_NAME_PREFIX = re.compile(r"^\s*(?:FAILED|ERROR|●|FAIL|×|✗|✖|--- FAIL:|panic:|not ok \d+)\s*")
_NAME_SUFFIX = re.compile(r"\s+(?:-\s.*|\.\.\. FAILED|\(\d[\d.]*m?s\))$")
_SGR = re.compile(r"\x1b\[[0-9;:]*m")


def refresh(ctx: SessionContext, *, view: Sequence[ChatMessage] | None = None) -> None:
    """Give the engine the trail when its requests need one (`view`: an Endless view's
    history, which stands for a cut one)."""
    manager = ctx.manager
    endless_on = bool((ctx.session.endless or {}).get("enabled"))
    cut = bool(ctx.compactions) or view is not None or endless_on
    manager.trail_on = cut
    wanted = cut or manager.truncation_due()
    manager.trail = render(artifacts(ctx.session_id)) if wanted else ""


def artifacts(session_id: str) -> list[Artifact]:
    """The session's artifacts, oldest first, each as one line."""
    turns = list(
        Message.objects.filter(
            session_id=session_id,
            role=Message.Role.USER,
            system_event=False,
            rolled_back=False,
        )
        .order_by("seq")
        .values_list("timestamp", flat=True)
    )
    found: list[tuple[datetime, Artifact]] = []
    edits = PendingEdit.objects.filter(
        session_id=session_id, status__in=[PendingEdit.Status.APPLIED, PendingEdit.Status.UNDONE]
    ).values_list("created_at", "path", "kind", "old_text", "new_text", "status")
    for at, path, kind, old, new, status in edits:
        line = f"{_edit_words(path, kind, old, new)}, turn {_turn(turns, at)}: {status}"
        found.append((at, Artifact(line, CHANGED)))
    runs = CommandRun.objects.filter(session_id=session_id).values_list(
        "created_at", "name", "argv", "exit_code", "ending", "output"
    )
    for at, name, argv, code, ending, output in runs:
        passed = ending == "exited" and code == 0
        shown = " ".join(str(a) for a in argv) + "`" + (f" ({name})" if name else "")
        line = f"ran `{shown}, turn {_turn(turns, at)}: {_run_status(code, ending, output)}"
        found.append((at, Artifact(line, PASSED if passed else FAILED)))
    pinned = (
        Message.objects.filter(session_id=session_id, pinned=True, rolled_back=False)
        .annotate(start=Substr("content", 1, PINNED_CHARS))
        .values_list("timestamp", "role", "start")
    )
    for at, role, start in pinned:
        line = f"pinned {role} message, turn {_turn(turns, at)}: {start}"
        found.append((at, Artifact(line, PINNED)))
    found.sort(key=lambda pair: pair[0])
    return [artifact for _, artifact in found]


def _turn(turns: list[datetime], at: datetime) -> int:
    return max(bisect_right(turns, at), 1)


def _edit_words(path: str, kind: str, old: str, new: str) -> str:
    if kind == PendingEdit.Kind.DELETE:
        return f"deleted {path}"
    if kind == PendingEdit.Kind.CREATE:
        return f"wrote {path} (+{len(new.splitlines())})"
    added = removed = 0
    for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return f"edited {path} (+{added} -{removed})"


def _run_status(code: int | None, ending: str, output: str) -> str:
    if ending != "exited":
        return ending
    if code == 0:
        return "exit 0"
    names = failing_tests(output)
    more = len(names) - NAMES_SHOWN
    listed = ", ".join(names[:NAMES_SHOWN]) + (f" and {more} more" if more > 0 else "")
    return f"exit {code}" + (f"; failed: {listed}" if names else "")


def failing_tests(output: str) -> list[str]:
    """The names of the failing tests a runner's output reports, in order, once each."""
    lines = [_SGR.sub("", line) for line in output.splitlines()]
    names: list[str] = []
    for index, (rank, _) in sorted(ranked(lines).items()):
        if rank != NAME:
            continue
        name = _NAME_SUFFIX.sub("", _NAME_PREFIX.sub("", lines[index])).strip()
        if name and name not in names:
            names.append(name)
    return names
