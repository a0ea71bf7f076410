"""A session's object sets (seed 001 §3.1–3.6): index, metadata pool, active set, pinned set.

One state, two hands: the person's file picker and the model's tools both call these
functions, so a file checked in the browser and a file the model activates are the same
row. The index only grows (a SessionObject row is never deleted); the pool only grows
(§3.2: nothing demotes from it yet); the active set is a subset of the pool; pins are
independent of activity. Activating a stub or an unknown path reads it first (full
indexing), so the active set never holds content that was not read. Resume (§3.6)
reconciles every sourced object of the session against the disk. The repository boundary
holds here too: internal paths never enter and are never re-read; a secret-shaped file
enters only with `allow_secret` (the person confirmed it), and a secret in the session's
active or pinned set is the person's confirmed choice (the model's tools cannot put one
there), so resume and the watcher re-read exactly those.

Non-goals: rendering (contextcore), watching the disk (chat.repo.watcher), the Files panel.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, Q, Subquery

from chat.repo import boundary, git, indexing
from chat.repo.repomap.symbols import language_of
from history import objects
from history.models import ContentObject, ObjectVersion, Session, SessionObject


class SetsError(ValueError):
    """A reference or change the sets refuse; the message is fit for the user or the model."""


@dataclass(frozen=True)
class Entry:
    object_id: str
    type: str
    path: str
    in_pool: bool
    active: bool
    pinned: bool
    stub: bool
    deleted: bool
    char_count: int | None
    tool: str
    status: str
    content: str | None
    file_hash: str | None
    indexed_at: datetime | None = None
    outline: bool = False  # active as its outline (signatures only), not its whole text


@cache
def _filesystem_id() -> str:
    return objects.host_filesystem_id()


def repository() -> indexing.Repository:
    """The served repository, with this host's filesystem id and the configured mounts."""
    mounts = tuple(
        objects.MountMapping(agent, canonical, _filesystem_id())
        for agent, canonical in getattr(settings, "ACDC_MOUNTS", ())
    )
    return indexing.Repository(Path(settings.ACDC_REPO), _filesystem_id(), mounts)


def display_path(obj: ContentObject, repo: indexing.Repository) -> str:
    """§4.1 displayPath: repository-relative for files inside the repository, else the
    agent-visible path the mount mappings give (the canonical path when none applies)."""
    if not obj.source:
        return ""
    try:
        return Path(obj.source["path"]).relative_to(repo.root).as_posix()
    except ValueError:
        return objects.to_display(obj.source, repo.mappings)


def entries(session: Session, repo: indexing.Repository | None = None) -> list[Entry]:
    """Every object of the session's index, in index order, with its latest version: two
    queries, whatever the number of objects and of their versions."""
    repo = repo or repository()
    versions_of = ObjectVersion.objects.filter(object_id=OuterRef("object_id"))
    links = list(
        SessionObject.objects.filter(session=session)
        .select_related("object")
        .annotate(
            latest_id=Subquery(versions_of.order_by("-created_at", "-id").values("id")[:1]),
            was_read=Exists(versions_of.exclude(file_hash=None)),
        )
    )
    latest = ObjectVersion.objects.filter(
        pk__in=[link.latest_id for link in links if link.latest_id]
    )
    versions = {version.object_id: version for version in latest} if links else {}
    was_read = {link.object_id for link in links if link.was_read}
    return [_entry(link, versions.get(link.object_id), repo, was_read) for link in links]


def _entry(
    link: SessionObject, version: ObjectVersion | None, repo, was_read: set[str] | None = None
) -> Entry:
    obj = link.object
    fields = version.fields if version else {}
    content = version.content if version else None
    stub = version is None or version.file_hash is None
    is_file = obj.type == ContentObject.Type.FILE
    return Entry(
        object_id=obj.id,
        type=obj.type,
        path=display_path(obj, repo) if is_file else "",
        in_pool=link.in_pool,
        active=link.active,
        pinned=link.pinned,
        stub=is_file and stub,
        deleted=is_file
        and stub
        and version is not None
        and (obj.id in was_read if was_read is not None else _was_read(obj)),
        char_count=None if is_file and stub else fields.get("char_count"),
        tool=fields.get("tool", ""),
        status=fields.get("status", ""),
        content=content,
        file_hash=version.file_hash if version else None,
        indexed_at=link.indexed_at,
        outline=link.outline,
    )


def _was_read(obj: ContentObject) -> bool:
    return obj.versions.exclude(file_hash=None).exists()


def resolve(
    session: Session,
    ref: str,
    repo: indexing.Repository | None = None,
    *,
    discover: bool = True,
    allow_secret: bool = False,
) -> ContentObject:
    """The content object `ref` names: an object id, or a path inside the repository.

    A path not yet known becomes a discovery stub in the session (when `discover`)."""
    repo = repo or repository()
    path = indexing.as_written(repo, ref or "")
    ref = (ref or "").strip()
    if not ref:
        raise SetsError("no object id or path given")
    if "\0" in ref:  # PostgreSQL text cannot even be queried with it
        raise SetsError(f"no object {git.short(ref)!r}: path contains a NUL byte")
    # Objects are shared across sessions; an id names one only within its own session's
    # index, or one session's tool output could be read from another.
    found = ContentObject.objects.filter(pk=ref, session_links__session=session).first()
    if found is not None:
        return found
    if _OBJECT_ID.fullmatch(ref) and not _is_path(repo, ref):
        raise SetsError(f"{git.short(ref)}: no such object in this session")
    try:
        key, source = indexing.locate(repo, path, allow_secret=allow_secret)
        object_id = objects.identity_hash(objects.FILE, source=source)
        found = ContentObject.objects.filter(pk=object_id).first()
        if found is not None:
            return found
        if not discover:
            raise SetsError(f"{git.short(ref)} is not in this session")
        if not indexing.exists(repo, key):
            raise SetsError(f"{key}: no such file")
        return indexing.discover_file(repo, key, session=session, allow_secret=allow_secret).object
    except indexing.IndexingError as exc:
        raise SetsError(f"no object {git.short(ref)!r}: {exc}") from None


_OBJECT_ID = re.compile(r"toolcall:.+|[0-9a-f]{64}", re.DOTALL)


def _is_path(repo: indexing.Repository, ref: str) -> bool:
    """Whether an id-shaped ref is also a file's name (a content-addressed store's)."""
    try:
        return (repo.root / ref).exists()
    except (OSError, ValueError):
        return False


def _judge(obj: ContentObject, repo, *, allow_secret: bool) -> None:
    """The boundary for an object named by id: its path is judged like a spelled one."""
    if obj.type != ContentObject.Type.FILE:
        return
    path = display_path(obj, repo)
    found = boundary.verdict(path, root=repo.root)
    if found.kind == "internal" or (found.kind == "secret" and not allow_secret):
        raise SetsError(f"{path}: {found.reason}")


def person_selected(session_id: str, obj: ContentObject) -> bool:
    """A secret the person confirmed: it is in the session's active or pinned set."""
    return SessionObject.objects.filter(
        Q(active=True) | Q(pinned=True), session_id=session_id, object=obj
    ).exists()


def confirmed_secret(session_id: str, path: str, repo: indexing.Repository | None = None) -> bool:
    """`path` is a secret-shaped file the person confirmed in this session."""
    repo = repo or repository()
    try:
        _, source = indexing.locate(repo, path, allow_secret=True)
    except indexing.IndexingError:
        return False
    obj = ContentObject.objects.filter(
        pk=objects.identity_hash(objects.FILE, source=source)
    ).first()
    return obj is not None and person_selected(session_id, obj)


def file_guard(session_id: str) -> Callable[[str], str]:
    """The boundary for the engine's own file reads (contextcore's `FileContext.guard`):
    never an internal path; a secret only when the person confirmed it in this session."""

    def guard(path: str) -> str:
        found = boundary.verdict(path)
        if found.kind == "secret" and confirmed_secret(session_id, path):
            return ""
        return found.reason

    return guard


def _link(session: Session, obj: ContentObject) -> SessionObject:
    link, _ = SessionObject.objects.get_or_create(session=session, object=obj)
    return link


def _entry_of(session: Session, obj: ContentObject, repo) -> Entry:
    link = SessionObject.objects.select_related("object").get(session=session, object=obj)
    return _entry(link, obj.latest_version(), repo)


@transaction.atomic
def activate(
    session: Session,
    ref: str,
    *,
    repo: indexing.Repository | None = None,
    allow_secret: bool = False,
    outline: bool = False,
) -> Entry:
    """§3.3 activate: into the pool and the active set; a file is (re)read first, so the
    active content is current and a stub becomes a full version. With `outline` a file
    goes to the prompt as its outline (only a file of a language acdc has a grammar for)."""
    repo = repo or repository()
    obj = resolve(session, ref, repo, allow_secret=allow_secret)
    _judge(obj, repo, allow_secret=allow_secret)
    if outline and obj.type != ContentObject.Type.FILE:
        raise SetsError(f"{git.short(ref)}: only a file has an outline")
    if obj.type == ContentObject.Type.FILE:
        path = display_path(obj, repo)
        if outline and not language_of(path):
            raise SetsError(f"{path}: no outline, acdc has no grammar for this kind of file")
        try:
            result = indexing.index_file(repo, path, session=session, allow_secret=allow_secret)
        except indexing.IndexingError as exc:
            raise SetsError(str(exc)) from None
        if result.deleted:
            raise SetsError(f"{path}: the file no longer exists")
    link = _link(session, obj)
    link.in_pool = link.active = True
    link.outline = outline
    link.save(update_fields=["in_pool", "active", "outline"])
    return _entry_of(session, obj, repo)


def _change(session: Session, ref: str, repo, **values: bool) -> Entry:
    """Taking out never reads, so a secret may be named; pins are judged by `pin`."""
    repo = repo or repository()
    obj = resolve(session, ref, repo, discover=False, allow_secret=True)
    link = SessionObject.objects.filter(session=session, object=obj).first()
    if link is None:
        raise SetsError(f"{git.short(ref)} is not in this session")
    for name, value in values.items():
        setattr(link, name, value)
    link.save(update_fields=list(values))
    return _entry_of(session, obj, repo)


def deactivate(session: Session, ref: str, *, repo: indexing.Repository | None = None) -> Entry:
    """§3.3 deactivate: out of the active set, still in the pool (shown as metadata)."""
    return _change(session, ref, repo, active=False)


def pin(
    session: Session,
    ref: str,
    *,
    repo: indexing.Repository | None = None,
    allow_secret: bool = False,
) -> Entry:
    """Exempt from auto-collapse and from shedding. A path not yet known is discovered."""
    repo = repo or repository()
    obj = resolve(session, ref, repo, allow_secret=allow_secret)
    _judge(obj, repo, allow_secret=allow_secret)
    _link(session, obj)
    return _change(session, obj.id, repo, pinned=True)


def unpin(session: Session, ref: str, *, repo: indexing.Repository | None = None) -> Entry:
    return _change(session, ref, repo, pinned=False)


def set_active_files(
    session: Session,
    paths: Iterable[str],
    *,
    repo: indexing.Repository | None = None,
    confirmed: Collection[str] = (),
    outlines: Collection[str] = (),
) -> list[str]:
    """Make the active file set exactly `paths` (the picker's checkboxes); returns a
    message for every path that could not be activated. Toolcalls are left alone.
    A secret-shaped path is activated only when it is in `confirmed`; a path also in
    `outlines` is activated as its outline."""
    repo = repo or repository()
    wanted = list(dict.fromkeys(p for p in paths if p))
    problems = []
    keep: set[str] = set()
    for path in wanted:
        try:
            entry = activate(
                session, path, repo=repo, allow_secret=path in confirmed, outline=path in outlines
            )
            keep.add(entry.object_id)
        except SetsError as exc:
            problems.append(str(exc))
    stale = SessionObject.objects.filter(
        session=session, active=True, object__type=ContentObject.Type.FILE
    ).exclude(object_id__in=keep)
    stale.update(active=False)
    return problems


def active_paths(session: Session, repo: indexing.Repository | None = None) -> list[str]:
    return [e.path for e in entries(session, repo) if e.type == "file" and e.active]


def outline_paths(session: Session, repo: indexing.Repository | None = None) -> list[str]:
    """Active files sent as their outline (a subset of `active_paths`)."""
    return [e.path for e in entries(session, repo) if e.type == "file" and e.active and e.outline]


def pinned_paths(session: Session, repo: indexing.Repository | None = None) -> list[str]:
    return [e.path for e in entries(session, repo) if e.type == "file" and e.pinned]


def resume(session: Session, repo: indexing.Repository | None = None) -> list[tuple[str, str]]:
    """§3.6 on session load: reconcile every sourced object of the session with the disk.

    Returns (path, outcome) per file: updated (new version), deleted (null version
    written), unreachable (cannot be read now: the latest version stays), unchanged,
    refused (an internal path, or a secret the person has not selected: not read, and an
    internal one leaves the active and pinned sets)."""
    repo = repo or repository()
    report = []
    links = SessionObject.objects.filter(
        session=session, object__type=ContentObject.Type.FILE
    ).select_related("object")
    for link in links:
        path = display_path(link.object, repo)
        found = boundary.verdict(path, root=repo.root)
        if found.kind == "internal" or (
            found.kind == "secret" and not (link.active or link.pinned)
        ):
            _withdraw(link, found)
            report.append((path, "refused"))
            continue
        latest = link.object.latest_version()
        if latest is not None and latest.file_hash is None and latest.content is None:
            if not (repo.root / path).exists():
                report.append((path, "unchanged"))  # a stub or an already-recorded deletion
                continue
            if not _was_read(link.object):
                report.append((path, "unchanged"))  # discovery stubs stay unread
                continue
        try:
            result = indexing.index_file(
                repo, path, trigger=indexing.Trigger.RESUME, allow_secret=True
            )
        except indexing.IndexingError:
            report.append((path, "unreachable"))
            continue
        if result.deleted and result.outcome == indexing.Outcome.UPDATED:
            report.append((path, "deleted"))
        elif result.outcome == indexing.Outcome.UPDATED:
            report.append((path, "updated"))
        else:
            report.append((path, "unchanged"))
    return report


def _withdraw(link: SessionObject, found: boundary.Verdict) -> None:
    if found.kind == "internal" and (link.active or link.pinned):
        link.active = link.pinned = False
        link.save(update_fields=["active", "pinned"])
