"""Writes that span rows: starting sessions, appending and finishing messages.

The user message is stored before the model is called; the assistant message is created
at its first save with empty content, what streams is appended as parts
(`history.stream.parts`), and the row gets its text once, when the reply ends: a crash
loses nothing already shown, and the search indexes see each reply once.
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from history.models import Message, Session, TokenUsage
from history.stream.parts import StreamPart

MAX_SEQ_RETRIES = 20


def session_create(*, repository: str, model: str = "", title: str = "") -> Session:
    return Session.objects.create(repository=repository, model=model, title=title)


def message_append(
    *,
    session: Session,
    role: str,
    content: str,
    turn_id: str = "",
    status: str = Message.Status.COMPLETE,
    model: str = "",
    files: list[str] | None = None,
    system_event: bool = False,
    edit_results: list | None = None,
    alt_of: str = "",
) -> Message:
    """Append with the next free number. Two writers may read the same newest number; the
    unique (session, seq) constraint refuses the second, which reads again and retries."""
    for _ in range(MAX_SEQ_RETRIES):
        last = session.messages.aggregate(n=Max("seq"))["n"]
        try:
            with transaction.atomic():
                message = Message.objects.create(
                    session=session,
                    seq=0 if last is None else last + 1,
                    role=role,
                    content=content,
                    turn_id=turn_id,
                    status=status,
                    model=model,
                    files=files or [],
                    system_event=system_event,
                    edit_results=edit_results or [],
                    alt_of=alt_of,
                )
        except IntegrityError:
            continue
        break
    else:
        raise IntegrityError(f"no free message number in session {session.pk} after retries")
    changes = {"updated_at": timezone.now()}
    if not session.title and role == Message.Role.USER and not system_event:
        session.title = changes["title"] = title_from(content)
    Session.objects.filter(pk=session.pk).update(**changes)
    return message


def message_finish(
    *,
    message_id: str,
    content: str,
    status: str,
    usage: dict[str, Any] | None = None,
    error: str = "",
) -> None:
    """The reply's one write of its text (and so of its search index); its parts go."""
    with transaction.atomic():
        Message.objects.filter(pk=message_id).update(
            content=content, status=status, usage=usage or {}, error=error
        )
        StreamPart.objects.filter(message_id=message_id).delete()


INTERRUPTED_NOTE = "The server stopped while this reply streamed; the text shown is what was kept."


def session_touch(*, session_id: str) -> None:
    """Make a session the repository's newest: the one `/` and auto-restore open."""
    Session.objects.filter(pk=session_id).update(updated_at=timezone.now())


def title_from(content: str) -> str:
    line = " ".join(content.split())
    return line[:77] + "..." if len(line) > 80 else line


def token_usage_record(
    *,
    session_id: str,
    turn_id: str,
    model: str,
    sections: dict[str, int],
    tiers: dict[str, int],
    estimated_prompt_tokens: int,
    usage: dict[str, int],
    cost: float | None,
    related: list[dict[str, Any]] | None = None,
) -> None:
    TokenUsage.objects.create(
        session_id=session_id,
        turn_id=turn_id,
        model=model,
        sections=sections,
        tiers=tiers,
        estimated_prompt_tokens=estimated_prompt_tokens,
        prompt_tokens=usage.get("prompt_tokens", 0),
        completion_tokens=usage.get("completion_tokens", 0),
        cache_read_tokens=usage.get("cache_read_tokens", 0),
        cache_write_tokens=usage.get("cache_write_tokens", 0),
        cost=cost,
        related=related or [],
    )
