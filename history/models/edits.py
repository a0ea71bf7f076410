"""Edits the model proposed, and what became of them."""

from __future__ import annotations

from django.db import models

from history.models.objects import ObjectVersion
from history.models.sessions import Message, Session


class PendingEdit(models.Model):
    """One edit the model proposed (an `edit_file`/`write_file` call or a SEARCH/REPLACE
    block of a reply), and what became of it. Rows are claimed with one conditional UPDATE
    before applying, so two tabs or workers accepting at once apply it once. An applied
    edit names the file versions before and after it; undoing one writes a new version."""

    class Status(models.TextChoices):
        PENDING = "pending"
        APPLIED = "applied"
        REJECTED = "rejected"
        CONFLICT = "conflict"  # the file changed since the model read it; nothing written
        UNDONE = "undone"
        FAILED = "failed"

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
    claim = models.CharField(max_length=64, blank=True)  # who is applying it now
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
