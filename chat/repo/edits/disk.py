"""The disk side of an edit: which file a path names, its text, and writing it safely.

`target` takes a path through the repository's one gate (`indexing.locate`: no NUL, no
`..`, nothing outside the repository, also not through a symlink, never `.git/` nor acdc's
data folder, never a secret-shaped file) and then reads the file as an edit needs it:
a regular file, within the size limit, UTF-8 text (no NUL); anything else is refused with
a reason (`EditRefused`). The text keeps its BOM and line endings byte for byte.
`write_temporary` and `rename_into` are the two halves of a safe write (a synced temporary
file in the same folder, then one rename over the old name and a sync of the folder),
keeping the file's permission bits; `write_text` does both for one file, `remove` deletes.
Both first note the write in the repository's own writes (`repo.own_writes`, the served
object's), which the watcher asks so that acdc's own write is not recorded a second time.
Non-goals: matching (contextcore.edits), rows (history).
"""

from __future__ import annotations

import hashlib
import os
import stat
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from chat.repo import git, indexing
from chat.repo.own_writes import OwnWrites
from contextcore.files import check_text

TEMP_SUFFIX = ".acdc-edit"
NEW_FILE_MODE = 0o644


class EditRefused(ValueError):
    """A path or file an edit may not touch; the message is for the model and the person."""


@dataclass(frozen=True)
class Target:
    key: str  # repo-relative, as the repository's objects name it
    full: Path  # the file written (a symlink inside the repository: its target)
    text: str | None  # None: the file does not exist

    @property
    def sha256(self) -> str | None:
        return None if self.text is None else sha256_of(self.text.encode("utf-8"))


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def target(repo: indexing.Repository, path: str) -> Target:
    """The file `path` names, judged and read; `EditRefused` says why it may not be edited."""
    try:
        key, _ = indexing.locate(repo, path)
    except indexing.IndexingError as exc:
        raise EditRefused(str(exc)) from None
    full = (repo.root / key).resolve()
    try:
        info = os.stat(full)
    except FileNotFoundError:
        return Target(key, full, None)
    except OSError as exc:
        raise EditRefused(f"{git.short(key)}: cannot be read ({exc.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        raise EditRefused(f"{git.short(key)}: not a regular file")
    if info.st_size > repo.size_cap:
        raise EditRefused(f"{git.short(key)}: too large to edit ({info.st_size:,} bytes)")
    text, reason = check_text(full.read_bytes(), repo.size_cap)
    if text is None:
        raise EditRefused(f"{git.short(key)}: {reason}")
    return Target(key, full, text)


def check_new_text(repo: indexing.Repository, key: str, text: str) -> None:
    """The text an edit would write must be what acdc may read back: text, within the limit."""
    _, reason = check_text(text.encode("utf-8", "surrogatepass"), repo.size_cap)
    if reason:
        raise EditRefused(f"{git.short(key)}: the new content is refused: {reason}")


def write_text(full: Path, text: str, own: OwnWrites | None) -> None:
    """Replace (or create) `full` with `text` atomically, keeping its permission bits."""
    temporary = full.parent / f".acdc-{uuid.uuid4().hex[:12]}{TEMP_SUFFIX}"
    write_temporary(full, temporary, text)
    rename_into(temporary, full, sha256_of(text.encode("utf-8")), own)


Writer = Callable[[BinaryIO, bytes], None]


def _write_all(handle: BinaryIO, data: bytes) -> None:
    handle.write(data)


def write_temporary(full: Path, temporary: Path, text: str, writer: Writer = _write_all) -> None:
    """Write `text` to `temporary` beside `full` (which it is to replace), synced, with the
    permission bits of `full` (or NEW_FILE_MODE); removed again if anything fails."""
    data = text.encode("utf-8")
    try:
        mode = stat.S_IMODE(os.stat(full).st_mode)
    except FileNotFoundError:
        mode = NEW_FILE_MODE
    full.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            writer(handle, data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def rename_into(temporary: Path, full: Path, sha256: str, own: OwnWrites | None) -> None:
    """Put a written temporary file in place of `full` (one rename), noted as acdc's own
    in `own` (the repository's)."""
    if own is not None:
        own.note(full, sha256)
    os.replace(temporary, full)
    _sync_folder(full.parent)


def remove(full: Path, own: OwnWrites | None) -> None:
    if own is not None:
        own.note(full, None)
    full.unlink(missing_ok=True)
    _sync_folder(full.parent)


def _sync_folder(folder: Path) -> None:
    """The rename itself is durable only once the folder is synced (where that exists)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def is_temporary(path: str) -> bool:
    """A temporary file of an edit in flight: never a file of the repository."""
    return path.endswith(TEMP_SUFFIX)
