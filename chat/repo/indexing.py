"""The indexing protocol of seed 001 §5.6, and toolcall creation (§5.7), over Django rows.

Full indexing reads a repository file and writes a new ObjectVersion only when its
file_hash differs from the stored one (a discovery stub's null hash always differs).
Discovery creates a stub with null content and never touches an existing object. A file
found gone gets one version with null content; nothing is ever deleted. Paths are checked
before anything is read: no NUL, no `..`, nothing outside the repository, also via
symlinks, and then the repository boundary (`chat.repo.boundary`): internal paths are
always refused, secret-shaped files unless the caller says the person confirmed them
(`allow_secret`). Non-goals: watching the disk, rendering, the activate/pin tools.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from django.db import transaction

from chat.repo import boundary, git
from chat.repo.own_writes import OwnWrites
from contextcore.files import DEFAULT_SIZE_CAP, PathRejected, check_text, normalize_path
from history import objects
from history.models import ContentObject, ObjectVersion, Session, SessionObject


class Outcome(StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"


class Trigger(StrEnum):
    """Why a file is indexed; only an agent read changes the session's sets (§5.6 step 4)."""

    READ = "read"
    WATCHER = "watcher"
    RESUME = "resume"


class IndexingError(ValueError):
    """A path or file that cannot be indexed; the message is fit to show the user or model."""


@dataclass(frozen=True)
class Repository:
    """Where files are read from and how their source bindings are formed (§2.3, §5.3)."""

    root: Path
    filesystem_id: str
    mappings: tuple[objects.MountMapping, ...] = ()
    size_cap: int = DEFAULT_SIZE_CAP
    # Earlier `.acdcignore` texts that still count for the session reading (boundary).
    secret_floor: tuple[str, ...] = ()
    # Where acdc's writes to it are noted for the watcher (the served repository's).
    own_writes: OwnWrites | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root).resolve())


@dataclass(frozen=True)
class IndexResult:
    outcome: Outcome
    object: ContentObject
    version: ObjectVersion

    @property
    def deleted(self) -> bool:
        """The newest version records the file as gone (or never read)."""
        return self.version.content is None and self.version.file_hash is None


def locate(repo: Repository, path: str, *, allow_secret: bool = False) -> tuple[str, dict]:
    """Repo-relative key and §2.3 source binding for `path`, or IndexingError; nothing
    is opened. A secret-shaped file passes only with `allow_secret` (the person's confirmation)."""
    if "\0" in path:
        raise IndexingError("path contains a NUL byte")
    if os.path.isabs(path):
        try:
            path = Path(path).relative_to(repo.root).as_posix()
        except ValueError:
            raise IndexingError("absolute path outside the repository") from None
    try:
        key = normalize_path(path)
    except PathRejected as exc:
        raise IndexingError(str(exc)) from None
    # Resolving symlinks makes two names of one file one object (the identity rule, §2.5).
    try:
        full = (repo.root / key).resolve()
    except (OSError, RuntimeError, ValueError) as exc:  # too long, a symlink loop …
        raise IndexingError(f"{git.short(key)}: {_refusal(exc)}") from None
    if not full.is_relative_to(repo.root):
        raise IndexingError(f"{git.short(key)}: resolves outside the repository")
    found = boundary.verdict(key, root=repo.root, floor=repo.secret_floor)
    if found.kind == "internal" or (found.kind == "secret" and not allow_secret):
        raise IndexingError(f"{git.short(key)}: {found.reason}")
    canonical, fs_id = objects.to_canonical(str(full), repo.mappings, repo.filesystem_id)
    return key, objects.filesystem_source(fs_id, canonical)


def exists(repo: Repository, key: str) -> bool:
    """Whether the repo-relative `key` names anything, or IndexingError with the reason the
    filesystem gives for refusing the name (a part over 255 bytes, a path too long)."""
    try:
        os.stat(repo.root / key)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a symlink loop names nothing, as Path.exists says
            return False
        raise IndexingError(f"{git.short(key)}: {_refusal(exc)}") from None
    except ValueError as exc:
        raise IndexingError(f"{git.short(key)}: {_refusal(exc)}") from None
    return True


def as_written(repo: Repository, path: str) -> str:
    """`path` as written when a file has that name (edge spaces are legal in one:
    ` notes.md`), else without its edge whitespace (a ref pasted with a stray space)."""
    stripped = path.strip()
    if stripped == path:
        return path
    try:
        return path if os.path.lexists(repo.root / path) else stripped
    except ValueError:  # a NUL: refused by whoever locates it
        return stripped


def _refusal(exc: BaseException) -> str:
    reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return f"the filesystem refuses this path ({reason})"


def index_file(
    repo: Repository,
    path: str,
    *,
    session: Session | None = None,
    trigger: Trigger = Trigger.READ,
    allow_secret: bool = False,
) -> IndexResult:
    """Full indexing (§5.6): created, updated or unchanged; a vanished file gets a null version."""
    key, source = locate(repo, path, allow_secret=allow_secret)
    raw = _read(repo, key)
    with transaction.atomic():
        if raw is None:
            return _record_deletion(key, source)
        text = raw.decode("utf-8")  # _read has checked it is text
        result = _record_content(source, raw, text)
        if session is not None and trigger == Trigger.READ:
            _link(session, result.object, active=True)
        return result


def discover_file(
    repo: Repository, path: str, *, session: Session | None = None, allow_secret: bool = False
) -> IndexResult:
    """Discovery (§5.6): a stub for an unknown path; an existing object is left as it is.
    Discovery from tool output never passes `allow_secret`."""
    _, source = locate(repo, path, allow_secret=allow_secret)
    with transaction.atomic():
        obj, created = _get_or_create(objects.FILE, source=source)
        if created:
            fields = objects.file_fields(source["path"], None)
            result = IndexResult(Outcome.CREATED, obj, _add_version(obj, None, None, fields))
        else:
            result = IndexResult(Outcome.UNCHANGED, obj, obj.latest_version())
        if session is not None:
            _link(session, obj, active=False)
        return result


@transaction.atomic
def record_toolcall(
    *,
    session: Session,
    call_id: str,
    tool: str,
    args: dict,
    status: str,
    output: str,
    args_display: str | None = None,
    file_refs: list[str] | None = None,
) -> IndexResult:
    """§5.7: a toolcall object, written once, added to the index, pool and active set."""
    fields = objects.toolcall_fields(
        tool=tool,
        args=args,
        status=status,
        chat_ref=objects.chat_ref(session.id),
        args_display=args_display,
        file_refs=file_refs,
    )
    object_id = objects.toolcall_object_id(session.id, call_id)
    obj, created = _get_or_create(objects.TOOLCALL, object_id=object_id)
    if not created:
        raise IndexingError(f"tool call {call_id} is already recorded")
    version = _add_version(obj, None, output, fields)
    _link(session, obj, active=True)
    return IndexResult(Outcome.CREATED, obj, version)


def _read(repo: Repository, key: str) -> bytes | None:
    """The file's bytes; None when it is confirmed gone. Anything unreadable is an error."""
    full = repo.root / key
    try:
        info = full.stat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise IndexingError(f"{git.short(key)}: cannot be read ({exc.strerror})") from None
    # Checked before opening: a FIFO or device would block or never end.
    if not stat.S_ISREG(info.st_mode):
        raise IndexingError(f"{git.short(key)}: not a regular file")
    if info.st_size > repo.size_cap:
        raise IndexingError(f"{git.short(key)}: too large ({info.st_size:,} bytes)")
    try:
        raw = full.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise IndexingError(f"{git.short(key)}: cannot be read ({exc.strerror})") from None
    text, reason = check_text(raw, repo.size_cap)
    if text is None:
        raise IndexingError(f"{git.short(key)}: {reason}")
    return raw


def _record_content(source: dict, raw: bytes, text: str) -> IndexResult:
    obj, _ = _get_or_create(objects.FILE, source=source)
    latest = obj.latest_version()
    if latest is not None and latest.file_hash == objects.file_hash(raw):
        return IndexResult(Outcome.UNCHANGED, obj, latest)
    version = _add_version(obj, raw, text, objects.file_fields(source["path"], text))
    return IndexResult(Outcome.CREATED if latest is None else Outcome.UPDATED, obj, version)


def _record_deletion(key: str, source: dict) -> IndexResult:
    object_id = objects.identity_hash(objects.FILE, source=source)
    obj = ContentObject.objects.filter(pk=object_id).first()
    if obj is None:
        raise IndexingError(f"{git.short(key)}: no such file")
    latest = obj.latest_version()
    if latest is not None and latest.content is None and latest.file_hash is None:
        return IndexResult(Outcome.UNCHANGED, obj, latest)
    version = _add_version(obj, None, None, objects.file_fields(source["path"], None))
    return IndexResult(Outcome.UPDATED, obj, version)


def _get_or_create(
    object_type: str, *, source: dict | None = None, object_id: str = ""
) -> tuple[ContentObject, bool]:
    ident = objects.identity_hash(object_type, source=source, object_id=object_id)
    # get_or_create retries the read on an IntegrityError: two clients, one object (§3.7).
    return ContentObject.objects.get_or_create(
        id=ident if source is not None else object_id,
        defaults={"type": object_type, "source": source, "identity_hash": ident},
    )


def _add_version(
    obj: ContentObject, raw: bytes | None, content: str | None, fields: dict
) -> ObjectVersion:
    hashes = objects.version_hashes(raw, content, fields)
    return ObjectVersion.objects.create(
        object=obj,
        content=content,
        file_hash=hashes.file_hash,
        content_hash=hashes.content_hash,
        metadata_hash=hashes.metadata_hash,
        object_hash=hashes.object_hash,
        fields=fields,
    )


def _link(session: Session, obj: ContentObject, *, active: bool) -> SessionObject:
    """Add to the session index and metadata pool; to the active set too when asked."""
    link, created = SessionObject.objects.get_or_create(
        session=session, object=obj, defaults={"in_pool": True, "active": active}
    )
    if not created and (not link.in_pool or (active and not link.active)):
        link.in_pool = True
        link.active = link.active or active
        link.save(update_fields=["in_pool", "active"])
    return link
