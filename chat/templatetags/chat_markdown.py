"""`{{ text|markdown }}`: model text as the chat page shows it, for other pages' templates.

The history transcript renders replies like the chat does, with the chat's one renderer
(`chat.web.render`: markdown, Pygments classes, nh3). A template filter is the seam
because `history` may not import `chat`; its templates may load this library.
"""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeString, mark_safe

from chat.web.render import render_markdown

register = template.Library()


@register.filter
def markdown(text: str) -> SafeString:
    return mark_safe(render_markdown(str(text or "")))  # noqa: S308 - sanitized by nh3
