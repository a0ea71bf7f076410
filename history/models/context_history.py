"""A session's context over time: compactions, checkpoints, cache layouts, Endless views."""

from __future__ import annotations

from django.db import models

from history.models.fields import PackedJSONField
from history.models.sessions import Session


class Compaction(models.Model):
    """One rewrite of a session's working history. Non-destructive: the messages stay in
    the store (and in search); only what the model sees changes.

    It stores references, not copies: `after` is the working history once rewritten, each
    stored message as `{"ref": id}` and only the entries the rewrite made (a summary, an
    omission marker) in full; `upto_seq` is the last message it covered. The working
    history is these records applied in order to the message rows, so undoing one is
    marking it undone. `history_before`/`history_after` are filled only by records made
    before references existed, and are read for those alone."""

    class Case(models.TextChoices):
        TRUNCATE = "truncate"
        SUMMARIZE = "summarize"
        REWRITE = "rewrite"  # the engine trimmed its history itself (an emergency cut)

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="compactions")
    case = models.CharField(max_length=16, choices=Case.choices)
    boundary_index = models.IntegerField(null=True, blank=True)
    confidence = models.FloatField(default=0.0)
    reason = models.TextField(blank=True)
    summary = models.TextField(blank=True)
    focus = models.TextField(blank=True)  # `/compact focus text`
    replaced_ids = models.JSONField(default=list, blank=True)  # messages no longer verbatim
    history_before = models.JSONField(default=list, blank=True)
    history_after = models.JSONField(default=list, blank=True)
    after = models.JSONField(null=True, blank=True)
    upto_seq = models.IntegerField(null=True, blank=True)
    tokens_before = models.PositiveIntegerField(default=0)
    tokens_after = models.PositiveIntegerField(default=0)
    model = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    undone_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["session", "created_at"], name="compaction_session_time")]

    def __str__(self) -> str:
        return f"{self.session_id} {self.case} {self.tokens_before}->{self.tokens_after}"


class Checkpoint(models.Model):
    """A saved position of a session's context (seed 003), to roll back to: the last
    message seq, the live compactions, the object sets and the small context header
    (which names its layout row). No history is copied: rolling back marks later
    messages rolled back (never deleting them) and brings back the compactions live then."""

    class Kind(models.TextChoices):
        AUTO = "auto"  # every N turns
        COMPACTION = "compaction"  # just before a compaction
        MANUAL = "manual"

    session = models.ForeignKey(  # indexed by checkpoint_session_time
        Session, on_delete=models.CASCADE, related_name="checkpoints", db_index=False
    )
    label = models.CharField(max_length=200, blank=True)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.MANUAL)
    context_state = PackedJSONField(default=dict, blank=True)
    object_sets = models.JSONField(default=list, blank=True)
    last_seq = models.PositiveIntegerField(default=0)
    compactions = models.JSONField(null=True, blank=True)  # ids live then; None: old record
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["session", "created_at"], name="checkpoint_session_time")]

    def __str__(self) -> str:
        return f"{self.session_id} {self.kind} {self.label or self.created_at}"


class SessionLayout(models.Model):
    """One version of a session's cache layout body (the documents and their order, as
    `contextcore.prompt.appendonly` keeps them), appended when it changes, which is when
    files change, not every turn. The context header names the current one."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="layouts")
    digest = models.CharField(max_length=64)
    body = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.session_id} layout {self.digest[:12]}"


class ManagedView(models.Model):
    """One Endless-mode view (seed 004): what the manager model was given and said, and the
    managed prompt the chat model saw instead of the raw history. Failed views are kept
    too (with the error): the turn failed open to the normal history."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="managed_views")
    turn_id = models.CharField(max_length=40, blank=True, db_index=True)
    template_name = models.CharField(max_length=64)
    template_source = models.CharField(max_length=16, blank=True)  # repo | builtin
    template_hash = models.CharField(max_length=64, blank=True)
    model = models.CharField(max_length=200, blank=True)
    input_payload = models.JSONField(default=dict, blank=True)
    raw_output = models.TextField(blank=True)
    managed_prompt = models.TextField(blank=True)
    stats = models.JSONField(default=dict, blank=True)
    failed = models.BooleanField(default=False)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["session", "created_at"], name="managedview_session_time")]

    def __str__(self) -> str:
        return f"{self.session_id} {self.template_name} {'failed' if self.failed else 'ok'}"
