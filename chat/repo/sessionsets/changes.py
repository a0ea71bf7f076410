"""Changing a session's sets (seed 001 §3.3): activate, deactivate, pin, unpin, and the
picker's whole active set at once.

Activating a stub or an unknown path reads it first (full indexing), so the active set
never holds content that was not read; an object named by id is judged by the repository
boundary like a spelled path. Taking out never reads, so a secret may be named to take it
out; putting a secret in needs `allow_secret` (the person confirmed it), which is recorded
on the link: only that confirmation, never being active, lets a secret stay.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from django.db import transaction

from chat.repo import boundary, git, indexing
from chat.repo.repomap.symbols import language_of
from chat.repo.sessionsets.entries import (
    Entry,
    SetsError,
    display_path,
    entry_of,
)
from chat.repo.sessionsets.resolving import resolve
from history.models import ContentObject, Session, SessionObject


def _judge(obj: ContentObject, repo, *, allow_secret: bool) -> None:
    """The boundary for an object named by id: its path is judged like a spelled one."""
    if obj.type != ContentObject.Type.FILE:
        return
    path = display_path(obj, repo)
    found = boundary.verdict(path, root=repo.root)
    if found.kind == "internal" or (found.kind == "secret" and not allow_secret):
        raise SetsError(f"{path}: {found.reason}")


def _link(session: Session, obj: ContentObject) -> SessionObject:
    link, _ = SessionObject.objects.get_or_create(session=session, object=obj)
    return link


@transaction.atomic
def activate(
    session: Session,
    ref: str,
    *,
    repo: indexing.Repository,
    allow_secret: bool = False,
    outline: bool = False,
) -> Entry:
    """§3.3 activate: into the pool and the active set; a file is (re)read first, so the
    active content is current and a stub becomes a full version. With `outline` a file
    goes to the prompt as its outline (only a file of a language acdc has a grammar for)."""
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
    link.secret_confirmed = link.secret_confirmed or allow_secret  # the person's word only
    link.save(update_fields=["in_pool", "active", "outline", "secret_confirmed"])
    return entry_of(session, obj, repo)


def _change(session: Session, ref: str, repo, **values: bool) -> Entry:
    """Taking out never reads, so a secret may be named; pins are judged by `pin`."""
    obj = resolve(session, ref, repo, discover=False, allow_secret=True)
    link = SessionObject.objects.filter(session=session, object=obj).first()
    if link is None:
        raise SetsError(f"{git.short(ref)} is not in this session")
    for name, value in values.items():
        setattr(link, name, value)
    link.save(update_fields=list(values))
    return entry_of(session, obj, repo)


def deactivate(session: Session, ref: str, *, repo: indexing.Repository) -> Entry:
    """§3.3 deactivate: out of the active set, still in the pool (shown as metadata)."""
    return _change(session, ref, repo, active=False)


def pin(
    session: Session,
    ref: str,
    *,
    repo: indexing.Repository,
    allow_secret: bool = False,
) -> Entry:
    """Exempt from auto-collapse and from shedding. A path not yet known is discovered."""
    obj = resolve(session, ref, repo, allow_secret=allow_secret)
    _judge(obj, repo, allow_secret=allow_secret)
    link = _link(session, obj)
    if allow_secret and not link.secret_confirmed:
        link.secret_confirmed = True
        link.save(update_fields=["secret_confirmed"])
    return _change(session, obj.id, repo, pinned=True)


def unpin(session: Session, ref: str, *, repo: indexing.Repository) -> Entry:
    return _change(session, ref, repo, pinned=False)


def set_active_files(
    session: Session,
    paths: Iterable[str],
    *,
    repo: indexing.Repository,
    confirmed: Collection[str] = (),
    outlines: Collection[str] = (),
) -> list[str]:
    """Make the active file set exactly `paths` (the picker's checkboxes); returns a
    message for every path that could not be activated. Toolcalls are left alone.
    A secret-shaped path is activated only when it is in `confirmed`; a path also in
    `outlines` is activated as its outline."""
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
