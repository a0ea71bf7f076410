"""Template tags for the review of edits: a reply's diff cards, and whether edits are on.

`{% reply_edits message %}` draws the reply's edits section (`edits-<id>`, empty when it
has none) on a page load, so a reload shows what every tab shows; `{% turn_edits turn %}`
those of a reply still streaming; `edits_on` whether to show the Auto-apply switch. None
draws anything unless ACDC_EDITS.
"""

from __future__ import annotations

from django import template
from django.apps import apps
from django.utils.safestring import SafeString, mark_safe

from chat.repo import edittools, indexing
from chat.web.edits.cards import render_edits, render_turn_edits
from history.models import Message

register = template.Library()


def _repository() -> indexing.Repository:
    """The served repository as indexing reads it: a template reaches a tag as a request
    reaches a view, so the tag fetches it from the served object (an entry point)."""
    return apps.get_app_config("chat").served.repository.indexed()


@register.simple_tag
def reply_edits(message: Message) -> SafeString:
    if not edittools.enabled() or message.role != Message.Role.ASSISTANT:
        return mark_safe("")
    repo = _repository()
    return mark_safe(render_edits(message, repo))  # rendered from a template, escaped there


@register.simple_tag
def turn_edits(turn_id: str) -> SafeString:
    """The read-only cards of a reply still streaming (`msg-<turn>-edits`)."""
    repo = _repository()
    return mark_safe(render_turn_edits(turn_id, repo))  # rendered from a template, escaped there


@register.simple_tag
def edits_on() -> bool:
    return edittools.enabled()
