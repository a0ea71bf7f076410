"""Reads: the sessions of a repository and the messages of a session.

list_sessions and get_session follow seed 000's history_list_sessions and
history_get_session; full-text search lives in history.search.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Substr

from history.models import Message, MessageImage, Session, TokenUsage
from history.stream.parts import with_streamed_text


def token_samples(*, model: str, limit: int) -> list[tuple[int, int]]:
    """(acdc's estimate, provider-reported prompt tokens) of the model's newest requests
    that reported any, newest first: what `contextcore.calibration` corrects with."""
    rows = (
        TokenUsage.objects.filter(model=model, prompt_tokens__gt=0, estimated_prompt_tokens__gt=0)
        .order_by("-id")
        .values_list("estimated_prompt_tokens", "prompt_tokens")[:limit]
    )
    return [(int(e), int(r)) for e, r in rows]


def session_latest(*, repository: str) -> Session | None:
    return Session.objects.for_repository(repository).newest_first().first()


def session_get(*, session_id: str) -> Session | None:
    return Session.objects.filter(pk=session_id).first()


def session_messages(*, session: Session) -> list[Message]:
    return with_streamed_text(list(session.messages.order_by("seq")))


PREVIEW_CHARS = 100


@dataclass(frozen=True)
class SessionSummary:
    """Seed 000's SessionSummary, plus the title the browser shows."""

    session_id: str
    title: str
    updated_at: datetime
    created_at: datetime
    message_count: int
    preview: str
    first_role: str


@dataclass(frozen=True)
class ImageInfo:
    sha256: str
    mime: str


@dataclass(frozen=True)
class SessionDetail:
    """One session with every message and, per message id, its images in order."""

    session: Session
    messages: list[Message]
    images: dict[str, list[ImageInfo]] = field(default_factory=dict)

    @property
    def message_count(self) -> int:
        return len(self.messages)


def list_sessions(*, repository: str, limit: int = 50) -> list[SessionSummary]:
    """The repository's sessions, newest first, with a preview of each first message."""
    first = Message.objects.filter(session=OuterRef("pk")).order_by("seq")
    rows = (
        Session.objects.for_repository(repository)
        .newest_first()
        .annotate(
            # Correlated, so counted only for the sessions shown: a join with COUNT would
            # aggregate every message of the repository before the LIMIT.
            message_count=Subquery(
                Message.objects.filter(session=OuterRef("pk"))
                .order_by()
                .values("session")
                .annotate(n=Count("*"))
                .values("n")
            ),
            preview_text=Subquery(
                first.annotate(p=Substr("content", 1, 4 * PREVIEW_CHARS)).values("p")[:1]
            ),
            first_role=Subquery(first.values("role")[:1]),
        )[: max(0, limit)]
    )
    return [_summary(s) for s in rows]


def _summary(session: Session) -> SessionSummary:
    text = " ".join((session.preview_text or "").split())
    preview = text[: PREVIEW_CHARS - 1] + "…" if len(text) > PREVIEW_CHARS else text
    return SessionSummary(
        session_id=session.id,
        title=session.display_title,
        updated_at=session.updated_at,
        created_at=session.created_at,
        message_count=session.message_count or 0,
        preview=preview,
        first_role=session.first_role or "",
    )


def get_session(*, session_id: str) -> SessionDetail | None:
    session = Session.objects.filter(pk=session_id).first()
    if session is None:
        return None
    messages = list(session.messages.order_by("seq"))
    links = (
        MessageImage.objects.filter(message__session=session)
        .order_by("message_id", "position")
        .values_list("message_id", "image_id", "image__mime")
    )
    images: dict[str, list[ImageInfo]] = {}
    for message_id, sha256, mime in links:
        images.setdefault(message_id, []).append(ImageInfo(sha256, mime))
    return SessionDetail(session=session, messages=messages, images=images)
