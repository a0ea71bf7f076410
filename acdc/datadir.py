"""The per-repository data folder (`<repo>/.acdc/` by default).

It holds the SQLite database and the generated secret key. It is kept out of git by a line
in the repository's `.git/info/exclude`, so acdc never dirties the user's `git status`.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

EXCLUDE_LINE = ".acdc/"


def prepare_data_dir(repo: Path, data_dir: Path) -> Path:
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ImproperlyConfigured(
            f"ACDC_DATA_DIR: cannot create {data_dir}: {exc.strerror}"
        ) from None
    if data_dir.resolve() == (repo / ".acdc").resolve():
        _exclude_from_git(repo)
    return data_dir


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
    """`given`, else the key kept in the data folder, made on first use.

    The new key is written whole to a file only its owner can read (mkstemp's 0600, from
    the start) and then linked into place, which fails if another worker got there first:
    no reader ever sees the key half written or readable by others, and every worker ends
    up with the same key.
    """
    if given:
        return given
    path = data_dir / "secret_key"
    if path.exists():
        return path.read_text().strip()
    key = secrets.token_urlsafe(50)
    fd, draft = tempfile.mkstemp(dir=data_dir, prefix=".secret_key.")
    try:
        with os.fdopen(fd, "w") as file:
            file.write(key)
        os.link(draft, path)
    except FileExistsError:
        key = path.read_text().strip()
    finally:
        os.unlink(draft)
    return key
