from __future__ import annotations

from django import template

register = template.Library()


@register.filter
def tokens(value: object) -> str:
    """12345 -> '12,345'; 1234567 -> '1.23M'."""
    try:
        number = int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "–"
    return f"{number / 1_000_000:.2f}M" if number >= 1_000_000 else f"{number:,}"
