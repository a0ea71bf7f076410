"""Sessions, their messages and the tokens each request used."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from history.ids import new_message_id, new_session_id
from history.models.fields import PackedJSONField


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
    context_state = PackedJSONField(default=dict, blank=True)  # deflated: ~40%
    # Settings of the session, in their own columns so a rollback of the context (which
    # restores `context_state`) never reverts them. `grounding` None: the server default.
    grounding = models.BooleanField(null=True, blank=True)
    endless = models.JSONField(default=dict, blank=True)  # {"enabled": bool, "template": str}
    instructions = models.BooleanField(default=True)  # send the project's AGENTS.md …
    # "Suggested for this message": {"off": bool, "removed": [key], "pinned": [key]}.
    suggestions = models.JSONField(default=dict, blank=True)
    # The `.acdcignore` lines in force when each of the session's turns started: a file the
    # model wrote can add secrets for the session, never take one away.
    secret_floor = models.JSONField(default=list, blank=True)
    # The turn lease: one turn at a time per session, across tabs and worker processes.
    # Taken with one conditional UPDATE; a dead worker's lease expires on its own.
    turn_owner = models.CharField(max_length=64, blank=True)
    turn_id = models.CharField(max_length=40, blank=True)
    turn_expires = models.DateTimeField(null=True, blank=True)
    turn_stop = models.BooleanField(default=False)  # Stop asked for from any tab
    # The model's edits are applied as they arrive instead of waiting for review (ACDC_EDITS).
    auto_apply = models.BooleanField(default=False)
    # "Check after applying edits": the declared command (its name) run once a reply's edits
    # are written; "" when off (chat.turn.checking).
    check_command = models.CharField(max_length=40, blank=True)
    # The turn whose edits Accept all wrote, its check not yet taken by a turn host.
    check_due = models.CharField(max_length=40, blank=True)
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
    # No index of its own: the (session, seq) one below serves the session's lookups.
    session = models.ForeignKey(
        Session, on_delete=models.CASCADE, related_name="messages", db_index=False
    )
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
    # Indexed only where it is set (VERSION_OF): a query by it must say so (`versions_of`).
    alt_of = models.CharField(max_length=40, blank=True)
    branch_path = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["seq"]
        constraints = [
            models.UniqueConstraint(fields=["session", "seq"], name="message_session_seq_unique")
        ]
        indexes = [models.Index(fields=["alt_of"], condition=~Q(alt_of=""), name="version_of")]

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:60]}"

    @staticmethod
    def versions_of(message_id: str) -> Q:
        """The later versions of a message, said as the partial index `version_of` needs
        (its condition among the query's terms), since most messages are no version."""
        return Q(alt_of=message_id) & ~Q(alt_of="")


class TokenUsage(models.Model):
    """One request's tokens: what acdc estimated per section, and what the provider billed."""

    session = models.ForeignKey(  # indexed by usage_session_time
        Session, on_delete=models.CASCADE, related_name="token_usage", db_index=False
    )
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
