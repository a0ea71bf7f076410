"""JSON from model text: the one place that finds a JSON object in what a model wrote.

Models asked for JSON answer with clean JSON, JSON in a markdown fence, or JSON amid prose;
`parse_json_output` tries those in that order and returns the first candidate that parses
as an object. Invariant: it never raises; anything else (an array, a number, no JSON) is
None. Non-goals: repairing truncated JSON, validating fields (each caller checks its own).
"""

from __future__ import annotations

import json
import re
from typing import Any

# The first fenced block holding an object; lazy, so two fences are never read as one.
_FENCED = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL | re.IGNORECASE)


def parse_json_output(text: str) -> dict[str, Any] | None:
    """A JSON object from a model's answer: the whole text, the first fenced block, or the
    outermost braces; None when there is none."""
    fenced = _FENCED.search(text)
    brace = text[text.find("{") : text.rfind("}") + 1] if "{" in text else ""
    for candidate in (text.strip(), fenced.group(1) if fenced else "", brace):
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    return None
