"""Template tags for the review of edits: a reply's diff cards, and whether edits are on.

`{% reply_edits message %}` draws the reply's edits section (`edits-<id>`, empty when it
has none) on a page load, so a reload shows what every tab shows; `{% turn_edits turn %}`
those of a reply still streaming; `edits_on` whether to show the Auto-apply switch. None
draws anything unless ACDC_EDITS.
"""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeString, mark_safe

from chat.repo import edittools
from chat.web.edits.cards import render_edits, render_turn_edits
from history.models import Message

register = template.Library()


@register.simple_tag
def reply_edits(message: Message) -> SafeString:
    if not edittools.enabled() or message.role != Message.Role.ASSISTANT:
        return mark_safe("")
    return mark_safe(render_edits(message))  # rendered from a template, escaped there


@register.simple_tag
def turn_edits(turn_id: str) -> SafeString:
    """The read-only cards of a reply still streaming (`msg-<turn>-edits`)."""
    return mark_safe(render_turn_edits(turn_id))  # rendered from a template, escaped there


@register.simple_tag
def edits_on() -> bool:
    return edittools.enabled()
