from __future__ import annotations

from django.contrib import admin

from history.models import (
    ContentObject,
    EditJournal,
    JournalEntry,
    Message,
    ObjectVersion,
    PendingEdit,
    Session,
    SessionObject,
    TokenUsage,
)


class MessageInline(admin.TabularInline):
    model = Message
    extra = 0
    fields = ("seq", "role", "status", "content", "turn_id")
    readonly_fields = fields
    show_change_link = True


@admin.register(Session)
class SessionAdmin(admin.ModelAdmin):
    list_display = ("id", "title", "repository", "model", "updated_at")
    search_fields = ("id", "title", "repository")
    inlines = [MessageInline]


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ("id", "session", "seq", "role", "status", "timestamp")
    list_filter = ("role", "status")
    search_fields = ("id", "content")


@admin.register(TokenUsage)
class TokenUsageAdmin(admin.ModelAdmin):
    list_display = (
        "turn_id",
        "session",
        "model",
        "prompt_tokens",
        "completion_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "cost",
        "created_at",
    )
    list_filter = ("model",)
    search_fields = ("turn_id", "session__id")
    readonly_fields = [f.name for f in TokenUsage._meta.fields]


class ObjectVersionInline(admin.TabularInline):
    model = ObjectVersion
    extra = 0
    fields = ("created_at", "file_hash", "content_hash", "metadata_hash", "object_hash")
    readonly_fields = fields
    show_change_link = True


@admin.register(ContentObject)
class ContentObjectAdmin(admin.ModelAdmin):
    list_display = ("id", "type", "created_at")
    list_filter = ("type",)
    search_fields = ("id",)
    readonly_fields = ("id", "type", "source", "identity_hash", "created_at")
    inlines = [ObjectVersionInline]


@admin.register(ObjectVersion)
class ObjectVersionAdmin(admin.ModelAdmin):
    list_display = ("object", "created_at", "file_hash", "object_hash")
    search_fields = ("object__id", "object_hash")
    # Append-only history: the admin shows versions, it never edits them.
    readonly_fields = [f.name for f in ObjectVersion._meta.fields]


@admin.register(SessionObject)
class SessionObjectAdmin(admin.ModelAdmin):
    list_display = ("session", "object", "in_pool", "active", "pinned", "indexed_at")
    list_filter = ("in_pool", "active", "pinned")
    search_fields = ("session__id", "object__id")


@admin.register(PendingEdit)
class PendingEditAdmin(admin.ModelAdmin):
    list_display = ("id", "session", "path", "kind", "status", "source", "updated_at")
    list_filter = ("status", "kind", "source")
    search_fields = ("session__id", "path", "call_id")
    raw_id_fields = ("session", "message", "version_before", "version_after")


class JournalEntryInline(admin.TabularInline):
    model = JournalEntry
    extra = 0
    fields = ("path", "renamed", "before_sha256", "after_sha256", "temporary")
    readonly_fields = fields


@admin.register(EditJournal)
class EditJournalAdmin(admin.ModelAdmin):
    list_display = ("id", "session", "purpose", "state", "created_at", "ended_at")
    list_filter = ("purpose", "state")
    search_fields = ("session__id", "claim")
    raw_id_fields = ("session",)
    inlines = [JournalEntryInline]
