"""Committing the files acdc changed in a session, only when the person asks.

`changes` is the session's files that acdc wrote (applied edits, and undone ones: acdc wrote
those too) and that git sees as changed now; `commit` stages exactly those and commits only
them (`git commit --only`), so what else the person staged stays staged and out of the
commit, and their other edits are not touched. Paths reach git only as literal pathspecs
after `--` (`git --literal-pathspecs`): a file named `:(glob)**`, `*` or `-rf` is itself.
The new commit is then read back; holding any other path (a hook that stages more), it is
undone and acdc's files go back to how the index had them. A hook file the session's edits
changed runs only with the person's word (`hooks="run"`, or `"skip"` to run no hook).
Every git runs through `gitlock`, which records it in the data folder: an index lock that
a git of acdc's left when it died (acdc killed mid-commit) is removed and the command run
again; any other lock is named, with the command that removes it.
Non-goals: pushing, amending, choosing files (the page shows the list).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from django.conf import settings

from chat.repo import indexing
from chat.repo.edits import gitlock
from chat.repo.protected import hooks_changed
from history.models import PendingEdit, Session

Status = PendingEdit.Status
Hooks = Literal["ask", "run", "skip"]
GIT_SECONDS = 60
_GIT_OPTIONS = ("--literal-pathspecs",)
# No hook at all, not only those --no-verify skips (prepare-commit-msg and post-commit run
# without it): git finds no hook in a folder that does not exist.
_NO_HOOKS = ("-c", "core.hooksPath=/dev/null")
_KINDS = MappingProxyType(
    {"A": "added", "?": "added", "D": "removed"}
)  # git status letters; else "changed"


class CommitRefused(ValueError):
    """Why nothing was committed; the message is for the person."""


class HooksNeedConsent(CommitRefused):
    """acdc's edits changed a hook that this commit would run: the person decides."""

    def __init__(self, hooks: list[str]) -> None:
        self.hooks = hooks
        super().__init__(
            f"acdc's edits changed {', '.join(hooks)}, which git would run on this commit; "
            "say whether to run it or to commit without hooks"
        )


@dataclass
class Committed:
    paths: list[str] = field(default_factory=list)
    summary: str = ""  # git's one-line summary of the new commit


def _written(session: Session, *statuses: str) -> list[PendingEdit]:
    statuses = statuses or (Status.APPLIED, Status.UNDONE)
    rows = PendingEdit.objects.filter(session=session, status__in=statuses)
    return list(rows.exclude(version_after=None).order_by("id"))


def _git(repo: indexing.Repository, *args: str, stdin: bytes | None = None):
    git = [*_GIT_OPTIONS, *args]
    return gitlock.run(repo.root, git, records=_records(), stdin=stdin, timeout=GIT_SECONDS)


def _records() -> Path:
    return Path(settings.ACDC_DATA_DIR) / gitlock.RECORDS


def _add(repo: indexing.Repository, paths: list[str]) -> subprocess.CompletedProcess:
    """`git add` of `paths`, run again once after removing an index lock that a dead git
    of acdc's left (`gitlock.clear_stale`)."""
    added = _git(repo, "add", "--", *paths)
    if added.returncode != 0 and gitlock.clear_stale(repo.root, _records()):
        added = _git(repo, "add", "--", *paths)
    return added


def _failed(repo: indexing.Repository, step: str, done: subprocess.CompletedProcess) -> str:
    held = gitlock.lock_held(repo.root, _records())
    return f"git {step} failed: {held or _reason(done)}"


def changes(session: Session, *, repo: indexing.Repository) -> dict[str, str]:
    """The files acdc wrote in the session that differ from git's last commit (or are
    new), in the order acdc first wrote them: path -> "added" | "changed" | "removed"."""
    written = list(dict.fromkeys(row.path for row in _written(session)))
    if not written:
        return {}
    found = _git(repo, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", *written)
    if found.returncode != 0:
        return {}
    kinds: dict[str, str] = {}
    entries = iter(found.stdout.split(b"\0"))
    for entry in entries:
        if entry[2:3] != b" ":
            continue
        code = entry[:2].decode()
        kinds[entry[3:].decode("utf-8", "surrogateescape")] = next(
            (_KINDS[c] for c in code if c in _KINDS), "changed"
        )
        if "R" in code or "C" in code:
            next(entries, None)  # a staged rename names its source next
    return {path: kinds[path] for path in written if path in kinds}


def changed_paths(session: Session, *, repo: indexing.Repository) -> list[str]:
    return list(changes(session, repo=repo))


def changed_hooks(session: Session, *, repo: indexing.Repository) -> list[str]:
    """The hook files (or pre-commit's config) that the session's applied edits changed:
    a commit would run them."""
    applied = dict.fromkeys(row.path for row in _written(session, Status.APPLIED))
    return hooks_changed(repo.root, applied)


def commit(
    session: Session, message: str, *, repo: indexing.Repository, hooks: Hooks = "ask"
) -> Committed:
    """Commit exactly the files acdc changed in the session, with `message`."""
    message = message.strip()
    if not message:
        raise CommitRefused("Write a commit message first.")
    paths = changed_paths(session, repo=repo)
    if not paths:
        raise CommitRefused("acdc changed no files in this session that git sees as changed.")
    changed = changed_hooks(session, repo=repo)
    if changed and hooks not in ("run", "skip"):
        raise HooksNeedConsent(changed)
    first = _git(repo, "rev-parse", "-q", "--verify", "HEAD").returncode != 0
    saved = _git(repo, "ls-files", "-s", "-z", "--", *paths).stdout
    added = _add(repo, paths)
    if added.returncode != 0:
        _restore_index(repo, paths, saved)
        raise CommitRefused(_failed(repo, "add", added))
    options = _NO_HOOKS if hooks == "skip" else ()
    flags = ("--no-verify",) if hooks == "skip" else ()
    done = _git(
        repo, *options, "commit", "-q", *flags, "--cleanup=whitespace", "-m", message,
        "--only", "--", *paths,
    )  # fmt: skip
    if done.returncode != 0:
        _restore_index(repo, paths, saved)
        raise CommitRefused(_failed(repo, "commit", done))
    _verify(repo, paths, first, saved)
    summary = _git(repo, "log", "-1", "--format=%h %s").stdout.decode(errors="replace").strip()
    return Committed(paths, summary)


def _verify(repo: indexing.Repository, paths: list[str], first: bool, saved: bytes) -> None:
    """The new commit changes exactly `paths`; otherwise it is undone (the branch back
    where it was, acdc's files as the index had them) and the person is told."""
    listed = _git(repo, "diff-tree", "--root", "--no-renames", "--no-commit-id",
                  "--name-only", "-r", "-z", "HEAD")  # fmt: skip
    held = {p.decode("utf-8", "surrogateescape") for p in listed.stdout.split(b"\0") if p}
    if listed.returncode == 0 and held == set(paths):
        return
    undo = ("update-ref", "-d", "HEAD") if first else ("reset", "-q", "--soft", "HEAD~1")
    undone = _git(repo, *undo).returncode == 0
    if undone:
        _restore_index(repo, paths, saved)
    others = sorted(held - set(paths)) or sorted(set(paths) - held)
    what = ", ".join(others[:5]) or "what git reports"
    if not undone:
        raise CommitRefused(f"the commit holds other files ({what}) and could not be undone")
    raise CommitRefused(f"the commit was undone: it held other files than acdc's ({what})")


def _restore_index(repo: indexing.Repository, paths: list[str], saved: bytes) -> None:
    """Put acdc's paths back in the index as `git ls-files -s -z` showed them before the
    commit (those it did not list are taken out); no other entry of the index is touched."""
    _git(repo, "update-index", "--force-remove", "--", *paths)
    if saved.strip(b"\0"):  # the same lines, "mode sha stage<TAB>path", put back
        _git(repo, "update-index", "-z", "--index-info", stdin=saved)


def _reason(done: subprocess.CompletedProcess) -> str:
    said = (done.stderr or done.stdout).decode(errors="replace").strip()
    return said.splitlines()[-1] if said else "?"
