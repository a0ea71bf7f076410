"""The per-repository data folder (`<repo>/.acdc/` by default).

It holds the SQLite database, the generated secret key and access token, the run file of
`acdc serve` and the map's symbol cache: the history of every chat, the images, the key
that signs cookies and the token that lets a page or a client in. It is its owner's alone:
the folder 0700 and acdc's files in it 0600, made so at every start whatever modes an older
acdc or a loose umask left (the database's -wal and -shm, which SQLite makes later, are
kept so by `history.dbfaults.keep_private`). It is kept out of git by a line in the
repository's `.git/info/exclude`, so acdc never dirties the user's `git status`; the
commands sandbox does not show it to a run.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import sys
import tempfile
from fnmatch import fnmatch
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

EXCLUDE_LINE = ".acdc/"
FOLDER_MODE = 0o700
# acdc's files in the folder: databases with SQLite's files beside them, the key, the run file
OWN_FILES = (
    *("*.sqlite3", "*.sqlite3-wal", "*.sqlite3-shm", "*.sqlite3-journal"),
    *("secret_key", "token", "server.json"),
)


def prepare_data_dir(repo: Path, data_dir: Path) -> Path:
    try:
        data_dir.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    except OSError as exc:
        raise ImproperlyConfigured(
            f"ACDC_DATA_DIR: cannot create {data_dir}: {exc.strerror}"
        ) from None
    keep_private(repo, data_dir)
    if data_dir.resolve() == (repo / ".acdc").resolve():
        _exclude_from_git(repo)
    return data_dir


def keep_private(repo: Path, data_dir: Path) -> None:
    """The folder and acdc's files in it, readable by their owner only. A data folder
    that holds the repository (ACDC_DATA_DIR set to it or above it) keeps its mode: closing
    it would close the person's repository to the others they share it with."""
    if not repo.resolve().is_relative_to(data_dir.resolve()):
        owner_only(data_dir)
    try:
        with os.scandir(data_dir) as entries:
            names = [entry.name for entry in entries]
    except OSError:
        return  # a folder acdc cannot list is one it cannot use: the database says so
    for name in names:
        if any(fnmatch(name, pattern) for pattern in OWN_FILES):
            owner_only(data_dir / name)


def owner_only(path: Path) -> None:
    """Take the group's and others' permissions off a file or folder (never through a
    symlink); one line on stderr when that is not allowed, as the data is then readable."""
    try:
        found = os.lstat(path)
        if not stat.S_ISLNK(found.st_mode) and found.st_mode & 0o077:
            os.chmod(path, stat.S_IMODE(found.st_mode) & 0o700)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.EROFS):
            return  # nothing to close, or nothing anyone can change (the database says so)
        print(
            f"acdc: warning: cannot make {path} private ({exc.strerror}); other users of "
            "this machine may read it",
            file=sys.stderr,
        )


def _exclude_from_git(repo: Path) -> None:
    info = repo / ".git" / "info"
    if not (repo / ".git").is_dir():
        return
    exclude = info / "exclude"
    try:
        info.mkdir(exist_ok=True)
        existing = exclude.read_text() if exclude.exists() else ""
        if EXCLUDE_LINE not in existing.splitlines():
            sep = "" if not existing or existing.endswith("\n") else "\n"
            exclude.write_text(f"{existing}{sep}{EXCLUDE_LINE}\n")
    except OSError:
        pass  # a read-only repository still works; git merely shows .acdc/ as untracked


def secret_key(data_dir: Path, given: str) -> str:
    """`given`, else the key kept in the data folder, made on first use."""
    return given or _kept_secret(data_dir, "secret_key", secrets.token_urlsafe(50))


def access_token(data_dir: Path, given: str) -> str:
    """`given` (ACDC_TOKEN), else the token kept in the data folder, made on first use and
    kept across restarts: a tab's cookie then outlives a restart of the server, and every
    worker sharing the folder lets in the same pages. Deleting the file makes a new one."""
    token = given or _kept_secret(data_dir, "token", secrets.token_urlsafe(32))
    if not token:  # nothing would ever match it: say how to get out rather than lock out
        raise ImproperlyConfigured(f"{data_dir / 'token'} is empty; delete it for a new token")
    return token


def _kept_secret(data_dir: Path, name: str, new: str) -> str:
    """The secret in `data_dir / name`, else `new`, written there first.

    The new secret is written whole to a file only its owner can read (mkstemp's 0600, from
    the start) and then linked into place, which fails if another worker got there first:
    no reader ever sees it half written or readable by others, and every worker ends up
    with the same secret.
    """
    path = data_dir / name
    if path.exists():
        return path.read_text().strip()
    fd, draft = tempfile.mkstemp(dir=data_dir, prefix=f".{name}.")
    try:
        with os.fdopen(fd, "w") as file:
            file.write(new)
        os.link(draft, path)
    except FileExistsError:
        new = path.read_text().strip()
    finally:
        os.unlink(draft)
    return new
