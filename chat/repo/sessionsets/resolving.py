"""What a reference names in a session's sets, and which secrets the person confirmed.

`resolve` takes an object id (only within the session's own index: objects are shared
across sessions) or a path inside the repository, which becomes a discovery stub when not
yet known. A secret-shaped file counts as confirmed when it is in the session's active or
pinned set: the model's tools cannot put one there, so the engine's own reads
(`file_guard`) and the mentions may read exactly those.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from django.db.models import Q

from chat.repo import boundary, git, indexing
from chat.repo.sessionsets.entries import SetsError
from history import objects
from history.models import ContentObject, Session, SessionObject


def resolve(
    session: Session,
    ref: str,
    repo: indexing.Repository,
    *,
    discover: bool = True,
    allow_secret: bool = False,
) -> ContentObject:
    """The content object `ref` names: an object id, or a path inside the repository.

    A path not yet known becomes a discovery stub in the session (when `discover`)."""
    path = indexing.as_written(repo, ref or "")
    ref = (ref or "").strip()
    if not ref:
        raise SetsError("no object id or path given")
    if "\0" in ref:  # PostgreSQL text cannot even be queried with it
        raise SetsError(f"no object {git.short(ref)}: path contains a NUL byte")
    # Objects are shared across sessions; an id names one only within its own session's
    # index, or one session's tool output could be read from another.
    found = ContentObject.objects.filter(pk=ref, session_links__session=session).first()
    if found is not None:
        return found
    if _OBJECT_ID.fullmatch(ref) and not _is_path(repo, ref):
        # An id is written as the tools wrote it (its colons are its own), unless it breaks.
        name = ref if ref.isprintable() and len(ref) <= 120 else git.short(ref)
        raise SetsError(f"{name}: no such object in this session")
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
        raise SetsError(f"no object {git.short(ref)}: {exc}") from None


_OBJECT_ID = re.compile(r"toolcall:.+|[0-9a-f]{64}", re.DOTALL)


def _is_path(repo: indexing.Repository, ref: str) -> bool:
    """Whether an id-shaped ref is also a file's name (a content-addressed store's)."""
    try:
        return (repo.root / ref).exists()
    except (OSError, ValueError):
        return False


def person_selected(session_id: str, obj: ContentObject) -> bool:
    """A secret the person confirmed in this session (the page's confirmation, or
    `--allow-secret`), still in its active or pinned set. A file a model's tool made active
    while it was not secret is not confirmed by that."""
    return SessionObject.objects.filter(
        Q(active=True) | Q(pinned=True), session_id=session_id, object=obj, secret_confirmed=True
    ).exists()


def confirmed_secret(session_id: str, path: str, repo: indexing.Repository) -> bool:
    """`path` is a secret-shaped file the person confirmed in this session."""
    try:
        _, source = indexing.locate(repo, path, allow_secret=True)
    except indexing.IndexingError:
        return False
    obj = ContentObject.objects.filter(
        pk=objects.identity_hash(objects.FILE, source=source)
    ).first()
    return obj is not None and person_selected(session_id, obj)


def hold_secret_floor(session_id: str, root) -> None:
    """A turn starts: the `.acdcignore` in force now keeps counting for the session, so a
    file written during it (by a model's edit) can add secrets but never take one away."""
    text = boundary.ignore_text(root)
    if not text.strip():
        return
    session = Session.objects.only("secret_floor").get(pk=session_id)
    if text not in (session.secret_floor or []):
        session.secret_floor = [*(session.secret_floor or []), text]
        session.save(update_fields=["secret_floor"])


def file_guard(
    session_id: str, repo: indexing.Repository, floor: Sequence[str] | None = None
) -> Callable[[str], str]:
    """The boundary for the engine's own file reads (contextcore's `FileContext.guard`):
    never an internal path; a secret only when the person confirmed it in this session.
    `floor` is the session's secret floor when the caller has the row (else it is read)."""
    if floor is None:
        floor = Session.objects.filter(pk=session_id).values_list("secret_floor", flat=True)
        floor = floor.first() or ()
    floor = tuple(floor)

    def guard(path: str) -> str:
        found = boundary.verdict(path, root=repo.root, floor=floor)
        if found.kind == "secret" and confirmed_secret(session_id, path, repo):
            return ""
        return found.reason

    return guard
