"""Edits the model proposed, and what became of them."""

from __future__ import annotations

from django.db import models

from history.models.objects import ObjectVersion
from history.models.sessions import Message, Session


class PendingEdit(models.Model):
    """One edit the model proposed (an `edit_file`/`write_file` call or a SEARCH/REPLACE
    block of a reply), and what became of it. Rows are claimed with one conditional UPDATE
    before applying, so two tabs or workers accepting at once apply it once; a claim names
    its process and expires (`claimed_at`), so a killed server holds nothing for ever. An
    applied edit names the file versions before and after it; undoing one writes a new
    version. A failed edit the model was told of (`told`) and then proposed again for the
    same file is `retried`: the later edit stands in for it."""

    class Status(models.TextChoices):
        PENDING = "pending"
        APPLIED = "applied"
        REJECTED = "rejected"
        CONFLICT = "conflict"  # the file changed since the model read it; nothing written
        UNDONE = "undone"
        FAILED = "failed"
        RETRIED = "retried"  # failed, sent back to the model, which proposed that file again

    class Kind(models.TextChoices):
        REPLACE = "replace"
        CREATE = "create"
        DELETE = "delete"

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="edits")
    # The assistant message that proposed it; bound when the reply is stored.
    message = models.ForeignKey(
        Message, null=True, blank=True, on_delete=models.CASCADE, related_name="edits"
    )
    turn_id = models.CharField(max_length=40, blank=True, db_index=True)
    call_id = models.CharField(max_length=255, blank=True)  # the proposing tool call
    block_index = models.IntegerField(null=True, blank=True)  # or its block in the reply
    source = models.CharField(max_length=16, blank=True)  # edit_file | write_file | block
    path = models.CharField(max_length=1024)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    old_text = models.TextField(blank=True)
    new_text = models.TextField(blank=True)  # the whole content for "create"
    replace_all = models.BooleanField(default=False)
    overwrite = models.BooleanField(default=False)
    base_sha256 = models.CharField(max_length=64, blank=True)  # the version the model saw
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    result = models.TextField(blank=True)  # the result line or the failure report
    claim = models.CharField(max_length=96, blank=True)  # who is applying it now
    claimed_at = models.DateTimeField(null=True, blank=True)
    told = models.BooleanField(default=False)  # a failure the model has been sent
    protected = models.TextField(blank=True)  # why the file needs the person's own Accept
    version_before = models.ForeignKey(
        ObjectVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    version_after = models.ForeignKey(
        ObjectVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["session", "status"], name="edit_session_status")]

    def __str__(self) -> str:
        return f"{self.session_id} {self.kind} {self.path} {self.status}"


class EditJournal(models.Model):
    """A set of writes acdc is making to the work tree: the intent is recorded before the
    first byte is written, each rename's outcome as it happens, and the end once the rows
    say what was written. A journal left open by a killed process is finished on the next
    start (`chat.repo.edits.journal.recover`), so the rows and the disk agree."""

    class State(models.TextChoices):
        OPEN = "open"
        DONE = "done"
        ROLLED_BACK = "rolled back"  # nothing of it is on disk
        RECOVERED = "recovered"  # finished after its process died

    class Purpose(models.TextChoices):
        APPLY = "apply"
        UNDO = "undo"
        RESTORE = "restore"

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="journals")
    claim = models.CharField(max_length=96, blank=True, db_index=True)  # its rows' claim
    purpose = models.CharField(max_length=16, choices=Purpose.choices)
    state = models.CharField(max_length=16, choices=State.choices, default=State.OPEN)
    created_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["state"], name="journal_state")]

    def __str__(self) -> str:
        return f"{self.purpose} {self.state} ({self.claim})"


class JournalEntry(models.Model):
    """One file of a journal: its path, the content before and after (sha256, empty for an
    absent file), the temporary file written first, and whether the rename happened."""

    journal = models.ForeignKey(EditJournal, on_delete=models.CASCADE, related_name="entries")
    path = models.CharField(max_length=1024)
    temporary = models.CharField(max_length=1024, blank=True)  # absolute; "" for a deletion
    before_sha256 = models.CharField(max_length=64, blank=True)
    after_sha256 = models.CharField(max_length=64, blank=True)
    version_before = models.ForeignKey(
        ObjectVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    renamed = models.BooleanField(default=False)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.path} {'renamed' if self.renamed else 'intended'}"
