"""A session's sets as read: one `Entry` per object of its index, and the paths of each set.

`entries` costs two queries whatever the number of objects and versions. Every function
here takes the repository as indexing reads it (the served repository's `indexed`).
Non-goals: changing the sets (`changes`), resolving what the person or the model names
(`resolving`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from django.db.models import Exists, OuterRef, Subquery

from chat.repo import indexing
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


def display_path(obj: ContentObject, repo: indexing.Repository) -> str:
    """§4.1 displayPath: repository-relative for files inside the repository, else the
    agent-visible path the mount mappings give (the canonical path when none applies)."""
    if not obj.source:
        return ""
    try:
        return Path(obj.source["path"]).relative_to(repo.root).as_posix()
    except ValueError:
        return objects.to_display(obj.source, repo.mappings)


def entries(session: Session, repo: indexing.Repository) -> list[Entry]:
    """Every object of the session's index, in index order, with its latest version: two
    queries, whatever the number of objects and of their versions."""
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
        and (obj.id in was_read if was_read is not None else ever_read(obj)),
        char_count=None if is_file and stub else fields.get("char_count"),
        tool=fields.get("tool", ""),
        status=fields.get("status", ""),
        content=content,
        file_hash=version.file_hash if version else None,
        indexed_at=link.indexed_at,
        outline=link.outline,
    )


def ever_read(obj: ContentObject) -> bool:
    return obj.versions.exclude(file_hash=None).exists()


def entry_of(session: Session, obj: ContentObject, repo) -> Entry:
    link = SessionObject.objects.select_related("object").get(session=session, object=obj)
    return _entry(link, obj.latest_version(), repo)


def file_choice(
    session: Session, repo: indexing.Repository
) -> tuple[list[str], list[str], list[str]]:
    """The session's files as the Files panel shows them, from one reading: the active
    ones, those of them sent as outlines, the pinned ones."""
    files = [e for e in entries(session, repo) if e.type == "file"]
    active = [e.path for e in files if e.active]
    outlined = [e.path for e in files if e.active and e.outline]
    return active, outlined, [e.path for e in files if e.pinned]


def active_paths(session: Session, repo: indexing.Repository) -> list[str]:
    return [e.path for e in entries(session, repo) if e.type == "file" and e.active]


def outline_paths(session: Session, repo: indexing.Repository) -> list[str]:
    """Active files sent as their outline (a subset of `active_paths`)."""
    return [e.path for e in entries(session, repo) if e.type == "file" and e.active and e.outline]


def pinned_paths(session: Session, repo: indexing.Repository) -> list[str]:
    return [e.path for e in entries(session, repo) if e.type == "file" and e.pinned]
