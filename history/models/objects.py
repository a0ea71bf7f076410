"""Images and the versioned content objects (files, tool calls) sessions hold."""

from __future__ import annotations

from django.db import models

from history.models.sessions import Message, Session


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
    # The person confirmed sending this secret-shaped file (the page's confirmation or
    # `--allow-secret`); being active, which a model's tool can do, is not a confirmation.
    secret_confirmed = models.BooleanField(default=False)
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
