"""Sessions and their messages: the persistent record of every conversation.

The store is append-mostly: a reply's row is made empty when it starts streaming, what
streams is appended beside it (`history.stream.parts`, so a crash keeps what the user
saw), and the row gets its text once, with a status that says how the turn ended. What
the model sees each turn is decided elsewhere; these rows are the source it is rebuilt from.
"""

from __future__ import annotations

from django.db import models

from history.ids import new_message_id, new_session_id


class SessionQuerySet(models.QuerySet):
    def for_repository(self, repository: str) -> SessionQuerySet:
        return self.filter(repository=repository)

    def newest_first(self) -> SessionQuerySet:
        return self.order_by("-updated_at", "-id")


class Session(models.Model):
    id = models.CharField(primary_key=True, max_length=40, default=new_session_id, editable=False)
    repository = models.CharField(max_length=1024, db_index=True)
    title = models.CharField(max_length=200, blank=True)
    model = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    pinned = models.BooleanField(default=False)
    # The small header a later turn needs to assemble the same prompt: file selection,
    # texts, cache-tier counts, the current layout's row and the HUD figures. The working
    # history is not in it: it is derived from the appended rows (messages, compactions).
    context_state = models.JSONField(default=dict, blank=True)
    # Settings of the session, in their own columns so a rollback of the context (which
    # restores `context_state`) never reverts them. `grounding` None: the server default.
    grounding = models.BooleanField(null=True, blank=True)
    endless = models.JSONField(default=dict, blank=True)  # {"enabled": bool, "template": str}
    instructions = models.BooleanField(default=True)  # send the project's AGENTS.md …
    # The turn lease: one turn at a time per session, across tabs and worker processes.
    # Taken with one conditional UPDATE; a dead worker's lease expires on its own.
    turn_owner = models.CharField(max_length=64, blank=True)
    turn_id = models.CharField(max_length=40, blank=True)
    turn_expires = models.DateTimeField(null=True, blank=True)
    turn_stop = models.BooleanField(default=False)  # Stop asked for from any tab
    # The model's edits are applied as they arrive instead of waiting for review (ACDC_EDITS).
    auto_apply = models.BooleanField(default=False)
    # The current cache layout body; the header holds only the parts that change per turn.
    layout = models.ForeignKey(
        "SessionLayout", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    objects = SessionQuerySet.as_manager()

    class Meta:
        indexes = [models.Index(fields=["repository", "-updated_at"], name="session_repo_recent")]

    def __str__(self) -> str:
        return self.title or self.id

    @property
    def display_title(self) -> str:
        return self.title or "Untitled session"


class Message(models.Model):
    class Role(models.TextChoices):
        USER = "user"
        ASSISTANT = "assistant"
        SYSTEM = "system"
        TOOL = "tool"  # one tool call of a turn: output in content, details in edit_results

    class Status(models.TextChoices):
        STREAMING = "streaming"
        COMPLETE = "complete"
        CANCELLED = "cancelled"
        INTERRUPTED = "interrupted"  # the stream or the server ended before the model did
        ERROR = "error"

    id = models.CharField(primary_key=True, max_length=40, default=new_message_id, editable=False)
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="messages")
    seq = models.PositiveIntegerField()
    role = models.CharField(max_length=16, choices=Role.choices)
    content = models.TextField(blank=True)
    timestamp = models.DateTimeField(auto_now_add=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.COMPLETE)
    error = models.TextField(blank=True)
    turn_id = models.CharField(max_length=40, blank=True, db_index=True)
    usage = models.JSONField(default=dict, blank=True)
    model = models.CharField(max_length=200, blank=True)
    files = models.JSONField(default=list, blank=True)
    files_modified = models.JSONField(default=list, blank=True)
    # @-mentions of a user message: {"path", "symbol", "line", "kind"}, in the typed order
    mentions = models.JSONField(default=list, blank=True)
    edit_results = models.JSONField(default=list, blank=True)
    system_event = models.BooleanField(default=False)
    pinned = models.BooleanField(default=False)
    rolled_back = models.BooleanField(default=False)  # set aside by a rollback, kept
    # Branches: a user message written again (Regenerate, Edit) names the first version's
    # id; a version out of view keeps the ids of its path (it and what followed it).
    alt_of = models.CharField(max_length=40, blank=True, db_index=True)
    branch_path = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["seq"]
        constraints = [
            models.UniqueConstraint(fields=["session", "seq"], name="message_session_seq_unique")
        ]

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:60]}"


class TokenUsage(models.Model):
    """One request's tokens: what acdc estimated per section, and what the provider billed."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="token_usage")
    turn_id = models.CharField(max_length=40, db_index=True)
    model = models.CharField(max_length=200)
    sections = models.JSONField(default=dict, blank=True)  # section -> estimated tokens
    tiers = models.JSONField(default=dict, blank=True)  # cache tier -> estimated tokens
    estimated_prompt_tokens = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cache_read_tokens = models.PositiveIntegerField(default=0)
    cache_write_tokens = models.PositiveIntegerField(default=0)
    cost = models.FloatField(null=True, blank=True)  # USD; null when prices are unknown
    # The related context this request offered (kind, text, source session and title,
    # relevance), as sent: the reply's "What the model saw" note reads it after a reload.
    related = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["session", "created_at"], name="usage_session_time")]

    def __str__(self) -> str:
        return f"{self.turn_id} {self.model} {self.prompt_tokens}+{self.completion_tokens}"

    @property
    def cache_hit_share(self) -> float:
        return self.cache_read_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


class Image(models.Model):
    """An image's bytes, stored once however often it is pasted (keyed by their sha256)."""

    sha256 = models.CharField(primary_key=True, max_length=64)
    mime = models.CharField(max_length=32)
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()
    size = models.PositiveIntegerField()
    data = models.BinaryField()
    thumbnail = models.BinaryField()  # WebP, at most 256 px on the long side
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.sha256[:12]} {self.mime} {self.width}x{self.height}"


class MessageImage(models.Model):
    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="image_links")
    image = models.ForeignKey(Image, on_delete=models.PROTECT, related_name="message_links")
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["message", "position"], name="message_image_position")
        ]


class ContentObject(models.Model):
    """A versioned content object of seed 001 (`file` or `toolcall`), shared across sessions.

    The envelope (id, type, source, identity_hash) never changes after creation; everything
    else lives in append-only ObjectVersion rows. Rows are never deleted (PROTECT below).
    """

    class Type(models.TextChoices):
        FILE = "file"
        TOOLCALL = "toolcall"

    # Sourced: the identity hash itself. Unsourced: assigned (see history.objects).
    id = models.CharField(primary_key=True, max_length=255, editable=False)
    type = models.CharField(max_length=16, choices=Type.choices)
    source = models.JSONField(null=True, blank=True)  # §2.3 binding; null when unsourced
    identity_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        path = (self.source or {}).get("path", "")
        return f"{self.type} {path or self.id}"

    def latest_version(self) -> ObjectVersion | None:
        return self.versions.order_by("-created_at", "-id").first()


class ObjectVersion(models.Model):
    """One immutable payload of a content object with its four per-version hashes (§2.4)."""

    object = models.ForeignKey(ContentObject, on_delete=models.PROTECT, related_name="versions")
    content = models.TextField(null=True, blank=True)  # null: stub, deleted file
    file_hash = models.CharField(max_length=64, null=True, blank=True)
    content_hash = models.CharField(max_length=64, null=True, blank=True)
    metadata_hash = models.CharField(max_length=64)
    object_hash = models.CharField(max_length=64)
    fields = models.JSONField(default=dict, blank=True)  # the type-specific fields of §2.6
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["object", "created_at"], name="version_object_time")]

    def __str__(self) -> str:
        return f"{self.object_id} @ {self.object_hash[:12]}"

    @property
    def is_stub(self) -> bool:
        """Never read (or gone): §4.1 renders such a file `[unread]`, not `char_count=0`."""
        return self.file_hash is None


class SessionObject(models.Model):
    """One content object in one session's sets (§3.1).

    The row's existence is session-index membership, so the index only grows: rows are
    never deleted while the session lives. `in_pool` ⊇ `active` is enforced below;
    `pinned` is independent (a pin survives deactivation).
    """

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="object_links")
    object = models.ForeignKey(
        ContentObject, on_delete=models.PROTECT, related_name="session_links"
    )
    in_pool = models.BooleanField(default=True)
    active = models.BooleanField(default=False)
    pinned = models.BooleanField(default=False)
    # An active file sent as its outline (signatures only) instead of its whole text.
    outline = models.BooleanField(default=False)
    indexed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["indexed_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["session", "object"], name="session_object_unique"),
            models.CheckConstraint(
                condition=~models.Q(active=True, in_pool=False),
                name="session_object_active_in_pool",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.session_id} {self.object_id}"


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

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="checkpoints")
    label = models.CharField(max_length=200, blank=True)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.MANUAL)
    context_state = models.JSONField(default=dict, blank=True)
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


# Registered with the app here; the model lives with the code that streams into it.
from history.stream.parts import StreamPart  # noqa: E402, F401
