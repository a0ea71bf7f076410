"""Template filters for the Context panel: token counts in words, and whether it shows a price."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import template

from chat.llm.facts import OFFLINE_MODELS

register = template.Library()


@register.filter
def tokens(value: object) -> str:
    """12345 -> '12,345'; 1234567 -> '1.23M'."""
    try:
        number = int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "–"
    return f"{number / 1_000_000:.2f}M" if number >= 1_000_000 else f"{number:,}"


@register.filter
def unbilled(hud: Mapping[str, Any]) -> str:
    """Why the Context panel shows no price ("" when it shows one): the HUD's own reason,
    or, for an offline model, "no cost (offline model)": acdc/fake carries reference prices
    only so that its cache simulation has something to weigh, and nothing is ever billed."""
    reason = hud.get("unbilled") or ""
    return "no cost (offline model)" if not reason and offline_model(hud) else reason


@register.filter
def offline_model(hud: Mapping[str, Any]) -> bool:
    return str(hud.get("model") or "") in OFFLINE_MODELS
