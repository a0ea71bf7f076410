"""Committing the files acdc changed in a session, only when the person asks.

`changed_paths` is the session's files that acdc wrote (applied edits, and undone ones:
acdc wrote those too) and that git sees as changed now; `proposed_message` is the first
line of the person's request in the latest turn whose edits applied, trimmed, for the
person to keep or replace; `commit` stages exactly those paths (`git add -- <paths>`) and
commits only them (`git commit -- <paths>`, which leaves anything else the person staged
out of the commit). Nothing calls it on its own: committing is the person's act.
Non-goals: pushing, amending, choosing files (the page shows the list).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field

from chat.repo import indexing
from history.models import Message, PendingEdit, Session

Status = PendingEdit.Status
MAX_SUBJECT = 72
GIT_SECONDS = 60


class CommitRefused(ValueError):
    """Why nothing was committed; the message is for the person."""


@dataclass
class Committed:
    paths: list[str] = field(default_factory=list)
    summary: str = ""  # git's one-line summary of the new commit


def _written(session: Session) -> list[PendingEdit]:
    rows = PendingEdit.objects.filter(session=session, status__in=(Status.APPLIED, Status.UNDONE))
    return list(rows.exclude(version_after=None).order_by("id"))


def _git(repo: indexing.Repository, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", "-C", str(repo.root), *args],
        capture_output=True,
        timeout=GIT_SECONDS,
        check=False,
    )


def changed_paths(session: Session, *, repo: indexing.Repository) -> list[str]:
    """The files acdc wrote in the session that differ from git's last commit (or are new)."""
    written = list(dict.fromkeys(row.path for row in _written(session)))
    if not written:
        return []
    found = _git(repo, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", *written)
    if found.returncode != 0:
        return []
    changed = {entry[3:].decode() for entry in found.stdout.split(b"\0") if entry[2:3] == b" "}
    return [path for path in written if path in changed]


def proposed_message(session: Session) -> str:
    """The first line of the request whose edits applied last, trimmed; "" when none."""
    rows = _written(session)
    turn = rows[-1].turn_id if rows else ""
    asked = Message.objects.filter(session=session, role=Message.Role.USER, turn_id=turn).first()
    line = next(
        (ln.strip() for ln in (asked.content if asked else "").splitlines() if ln.strip()), ""
    )
    return line if len(line) <= MAX_SUBJECT else line[: MAX_SUBJECT - 1].rstrip() + "…"


def commit(session: Session, message: str, *, repo: indexing.Repository) -> Committed:
    """Commit exactly the files acdc changed in the session, with `message`."""
    message = message.strip()
    if not message:
        raise CommitRefused("Write a commit message first.")
    paths = changed_paths(session, repo=repo)
    if not paths:
        raise CommitRefused("acdc changed no files in this session that git sees as changed.")
    for step in (("add", "--", *paths), ("commit", "-q", "-m", message, "--", *paths)):
        done = _git(repo, *step)
        if done.returncode != 0:
            reason = (done.stderr or done.stdout).decode(errors="replace").strip()
            raise CommitRefused(
                f"git {step[0]} failed: {reason.splitlines()[-1] if reason else '?'}"
            )
    summary = _git(repo, "log", "-1", "--format=%h %s").stdout.decode(errors="replace").strip()
    return Committed(paths, summary)
