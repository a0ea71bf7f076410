"""The write journal: a set of files written all together or not at all, even across a kill.

`write_set` records its intent (each path, its sha256 before and after, its temporary file)
in an open `EditJournal` before writing anything, then writes every temporary file (synced)
and only when all are written renames them into place, recording each rename. An OS error
before the first rename (a full disk, a folder it may not write) removes the temporaries:
nothing changed; one between renames puts the renamed files back. Either way `WriteFailed`
says so in one line. The caller closes the journal (`close`) in the transaction that records
what was written. `recover` finishes journals whose process died, so the rows and the disk
agree: a file holding the journal's "after" bytes is applied (or undone) with a version,
every other edit is pending (or applied) again, temporaries are removed, and dead claims
with no journal are given back. Non-goals: matching, deciding which rows form a set.
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from chat.repo import indexing
from chat.repo.edits import disk
from chat.repo.edits.versions import number_of, record
from chat.repo.git import shown
from contextcore.edits import diff_hunks
from history import edits as rows_
from history.models import EditJournal, JournalEntry, Message, ObjectVersion, PendingEdit, Session

log = logging.getLogger(__name__)
Status = PendingEdit.Status
State, Purpose = EditJournal.State, EditJournal.Purpose
# A test hook: the process kills itself (SIGKILL) after this many renames of a set.
KILL_AFTER_RENAMES = "ACDC_TEST_KILL_AFTER_RENAMES"


class WriteFailed(Exception):
    """Nothing of the set is on disk (or what was renamed was put back); for the person."""


@dataclass(frozen=True)
class Change:
    key: str  # repo-relative
    full: Path  # the file written
    before: str | None  # None: the file does not exist
    after: str | None  # None: the file is deleted
    version_before: ObjectVersion | None = None


def _sha(text: str | None) -> str:
    return "" if text is None else disk.sha256_of(text.encode("utf-8"))


def write_set(
    session: Session,
    changes: Sequence[Change],
    *,
    repo: indexing.Repository,
    claim: str,
    purpose: str,
    writer: disk.Writer = disk._write_all,
) -> EditJournal:
    """Write every change or none; returns the open journal for the caller to `close`."""
    journal, entries = _intend(session, changes, claim, purpose)
    written: list[Path] = []
    for change, entry in zip(changes, entries, strict=True):
        if change.after is None:
            continue
        try:
            disk.write_temporary(change.full, Path(entry.temporary), change.after, writer)
        except OSError as exc:
            _discard(written)
            _end(journal, State.ROLLED_BACK)
            raise WriteFailed(_failed(exc, change.key, "writing a copy of")) from None
        written.append(Path(entry.temporary))
    _rename_all(journal, changes, entries, repo)
    return journal


def _intend(session, changes, claim, purpose) -> tuple[EditJournal, list[JournalEntry]]:
    with transaction.atomic():
        journal = EditJournal.objects.create(session=session, claim=claim, purpose=purpose)
        entries = [
            JournalEntry(
                journal=journal,
                path=change.key,
                temporary="" if change.after is None else str(_temporary(journal, n, change)),
                before_sha256=_sha(change.before),
                after_sha256=_sha(change.after),
                version_before=change.version_before,
            )
            for n, change in enumerate(changes)
        ]
        JournalEntry.objects.bulk_create(entries)
    return journal, list(journal.entries.order_by("id"))


def _temporary(journal: EditJournal, n: int, change: Change) -> Path:
    # Short, whatever the file's name: a 250-character name plus a suffix would not fit.
    return change.full.parent / f".acdc-{journal.pk}-{n}{disk.TEMP_SUFFIX}"


def _rename_all(journal, changes, entries, repo) -> None:
    done: list[Change] = []
    for change, entry in zip(changes, entries, strict=True):
        try:
            if change.after is None:
                disk.remove(change.full, repo.own_writes)
            else:
                own = repo.own_writes
                disk.rename_into(Path(entry.temporary), change.full, entry.after_sha256, own)
        except OSError as exc:
            _discard([Path(e.temporary) for e in entries if e.temporary])
            if not _put_back(done, repo):
                settle(journal, repo)  # the rows say what is on disk, whatever it is now
                raise WriteFailed(_failed(exc, change.key, "replacing")) from None
            _end(journal, State.ROLLED_BACK)
            raise WriteFailed(_failed(exc, change.key, "replacing")) from None
        JournalEntry.objects.filter(pk=entry.pk).update(renamed=True)
        done.append(change)
        if os.environ.get(KILL_AFTER_RENAMES) == str(len(done)):
            os.kill(os.getpid(), signal.SIGKILL)


def _put_back(done: list[Change], repo: indexing.Repository) -> bool:
    """Give the renamed files their content back; False when the disk refused."""
    try:
        for change in reversed(done):
            if change.before is None:
                disk.remove(change.full, repo.own_writes)
            else:
                disk.write_text(change.full, change.before, repo.own_writes)
    except OSError:
        log.exception("a file acdc had written could not be put back")
        return False
    return True


def _discard(paths: Sequence[Path]) -> None:
    for path in paths:
        try:
            path.unlink(missing_ok=True)
        except OSError:
            log.warning("a temporary file of an edit could not be removed: %s", path)


def _failed(exc: OSError, key: str, doing: str) -> str:
    reason = exc.strerror or str(exc) or type(exc).__name__
    return (
        f"Nothing was written: {reason} while {doing} {key}. "
        "Every file is as it was; free the space or fix the folder, then try again."
    )


def _end(journal: EditJournal, state: str) -> None:
    journal.state, journal.ended_at = state, timezone.now()
    journal.save(update_fields=["state", "ended_at"])


def close(journal: EditJournal) -> None:
    """The set is written and the rows say so (call inside the rows' transaction)."""
    _end(journal, State.DONE)


# -- recovery ---------------------------------------------------------------------------


def recover(repo: indexing.Repository) -> list[str]:
    """Finish what dead processes left: their open journals settled against the disk,
    their other claims given back. Returns a line per journal settled."""
    said = []
    for claim, _ in rows_.dead_claims():
        journal = EditJournal.objects.filter(claim=claim, state=State.OPEN).first()
        if journal is None:
            rows_.edits_release(list(PendingEdit.objects.filter(claim=claim)))
            continue
        said.append(settle(journal, repo))
    for journal in EditJournal.objects.filter(state=State.OPEN).exclude(
        claim__in=PendingEdit.objects.exclude(claim="").values("claim")
    ):
        if rows_.claim_is_dead(journal.claim, journal.created_at):
            said.append(settle(journal, repo))  # a restore's journal: no rows hold it
    return said


def settle(journal: EditJournal, repo: indexing.Repository) -> str:
    """Make the journal's rows say what its files hold now, and end it."""
    rows = list(PendingEdit.objects.filter(claim=journal.claim).order_by("id"))
    finished = 0
    for entry in journal.entries.select_related("version_before"):
        if entry.temporary:
            _discard([Path(entry.temporary)])
        mine = [row for row in rows if row.path == entry.path]
        now = _sha_on_disk(repo, entry.path)
        if now == entry.after_sha256 and now != entry.before_sha256:
            finished += _finish(journal, entry, mine, repo)
    rows_.edits_release([row for row in rows if row.claim])  # the rest as they were
    for message_id in {row.message_id for row in rows if row.message_id}:
        rows_.message_record_edits(Message.objects.get(pk=message_id))
    _end(journal, State.RECOVERED)
    line = f"finished an interrupted {journal.purpose} of {journal.entries.count()} file(s)"
    log.warning("%s (%d written)", line, finished)
    return f"{line}: {finished} written, the rest as before"


def _sha_on_disk(repo: indexing.Repository, key: str) -> str | None:
    try:
        return disk.target(repo, key).sha256 or ""
    except disk.EditRefused:
        return None


def _finish(journal, entry: JournalEntry, rows: list[PendingEdit], repo) -> int:
    """The file holds what the journal meant to write: its rows say so, with a version."""
    after = record(repo, entry.path, journal.session)
    if journal.purpose == Purpose.APPLY:
        before = entry.version_before
        hunks = diff_hunks(_text(before), _text(after))
        plus, minus = sum(h.added for h in hunks), sum(h.removed for h in hunks)
        versions = f"v{number_of(before)}→v{number_of(after)}"
        line = (
            f"applied: {shown(entry.path)} {versions}, +{plus} −{minus} (finished after a restart)"
        )
        for row in rows:
            rows_.edit_mark(row, Status.APPLIED, line, before=before, after=after)
    elif journal.purpose == Purpose.UNDO:
        line = f"undone: {shown(entry.path)} (finished after a restart)"
        for row in rows:
            rows_.edit_mark(row, Status.UNDONE, line)
    return 1


def _text(version: ObjectVersion | None) -> str | None:
    return None if version is None or version.file_hash is None else version.content
