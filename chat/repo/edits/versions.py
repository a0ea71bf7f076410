"""Edits and the versioned file objects (seed 001): what the model saw, what acdc wrote.

`file_version` is the newest version of a file the session has met (the model saw it
through acdc), whose sha256 an op names as its base; `seen_texts` gives the matcher those
texts back so it can re-anchor an op whose file changed since. `record` runs the indexing
protocol on a file acdc is about to write or has written (a new version only when its
bytes changed) and puts it in the session's metadata pool without activating it: the next
request carries a changed active file as a diff, and an inactive one as its result line
only. `number_of` is a version's place among its object's text versions (v1, v2, ...).
Non-goals: the writing itself (`disk`), rows (`history.edits`).
"""

from __future__ import annotations

from collections.abc import Sequence

from chat.repo import indexing
from contextcore.edits import EditOp
from history import objects
from history.models import ContentObject, ObjectVersion, Session, SessionObject


def _object(repo: indexing.Repository, path: str) -> ContentObject | None:
    try:
        _, source = indexing.locate(repo, path)
    except indexing.IndexingError:
        return None
    object_id = objects.identity_hash(objects.FILE, source=source)
    return ContentObject.objects.filter(pk=object_id).first()


def file_version(repo: indexing.Repository, path: str, session: Session) -> ObjectVersion | None:
    """The newest version of `path` when the session has met the file, else None."""
    obj = _object(repo, path)
    if obj is None or not SessionObject.objects.filter(session=session, object=obj).exists():
        return None
    return obj.latest_version()


def seen_texts(
    repo: indexing.Repository, ops: Sequence[EditOp], session: Session
) -> dict[str, str]:
    """The text of the version each op names as its base, where acdc stored it."""
    seen: dict[str, str] = {}
    for op in ops:
        if not op.base_sha256 or op.path in seen:
            continue
        obj = _object(repo, op.path)
        version = (
            obj.versions.filter(file_hash=op.base_sha256).exclude(content=None).last()
            if obj is not None
            else None
        )
        if version is not None:
            seen[op.path] = version.content or ""
    return seen


def record(repo: indexing.Repository, key: str, session: Session) -> ObjectVersion | None:
    """The file's version as it is on disk now (recorded if new); None for a file that is
    gone and that acdc never knew."""
    try:
        result = indexing.index_file(repo, key, trigger=indexing.Trigger.WATCHER)
        indexing.discover_file(repo, key, session=session)
    except indexing.IndexingError:
        return None
    return result.version


def number_of(version: ObjectVersion | None) -> int:
    """The version's number among its object's versions that hold content (a discovery
    stub or a deletion is not a version of the text): v1 is the first text acdc read."""
    if version is None:
        return 0
    earlier = ObjectVersion.objects.filter(object_id=version.object_id, id__lte=version.id)
    return earlier.exclude(file_hash=None).count()
