"""`{{ text|colours }}`: a command's output with its SGR colours drawn as classed spans.

The text is `printable` already (no control sequence but colours); the filter escapes it
and turns each colour into a span (`chat.web.fragments.coloured_html`, the one drawing of
colours, which the live view uses too), so a card never shows an escape character.
"""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeString, mark_safe

from chat.web.fragments import coloured_html

register = template.Library()


@register.filter
def colours(text: str) -> SafeString:
    return mark_safe(coloured_html(text or ""))  # noqa: S308 - escaped by ansi2html
