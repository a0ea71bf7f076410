"""Template filters for the history browser (humanize is not installed; this is all it needs).

`markdown` shows a stored reply as the chat page does, with the one renderer
(`history.markup.render`: markdown, Pygments classes, nh3)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django import template
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe
from django.utils.timesince import timesince

from history.interchange.export import edit_lines as _edit_lines
from history.markup.render import render_markdown

register = template.Library()


@register.filter
def markdown(text: str) -> SafeString:
    return mark_safe(render_markdown(str(text or "")))  # noqa: S308 - sanitized by nh3


@register.filter
def edit_lines(message) -> list[tuple[str, str]]:
    """A reply's edits as (path, result line), for the list under it."""
    return _edit_lines(message)


@register.filter
def ago(moment: datetime | None, now: datetime | None = None) -> str:
    """'3 hours ago', 'just now': the largest unit only, like a chat app shows."""
    if moment is None:
        return ""
    now = now or timezone.now()
    if now - moment < timedelta(minutes=1):
        return "just now"
    return f"{timesince(moment, now, depth=1)} ago"
