"""A call of an MCP tool that waits for the person, as its card shows it: the tool, the
exact arguments, the server's annotations (shown, never trusted), the answer.

The card sits inside the tool card of the call (`chat/_mcp_approval.html`), in the live
reply and in the page drawn from the store alike. A pending card offers Run once, Always
allow this tool, and Deny; an answered one says the answer. The arguments are one line of
JSON with every character a reader cannot see drawn as a marked escape, as a proposed
command's argv is, because the person approves that call and nothing like it.
"""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

from django.template.loader import render_to_string

from chat.repo.mcp import asking
from contextcore.controls import visible_parts
from history.models import ToolApproval

HINTS = MappingProxyType(
    {
        "read_only_hint": "read-only",
        "destructive_hint": "destructive",
        "idempotent_hint": "idempotent",
        "open_world_hint": "reaches outside",
    }
)


def shown(facts: dict[str, Any], note: str = "") -> dict:
    """The card's fields from the approval's facts (`asking.facts`)."""
    tool = str(facts.get("tool", ""))
    _, _, rest = tool.partition("mcp__")
    server, _, name = rest.partition("__")
    arguments = json.dumps(facts.get("arguments") or {}, ensure_ascii=False, sort_keys=True)
    return {
        "id": facts["id"],
        "mcp": True,
        "tool": tool,
        "server": server,
        "name": name,
        "arguments": visible_parts(arguments),
        "annotations": _annotations(facts.get("annotations") or {}),
        "status": facts.get("status", ToolApproval.Status.PENDING),
        "note": note,
    }


def _annotations(given: dict[str, Any]) -> list[str]:
    said = [f"{HINTS[k]}: {'yes' if v else 'no'}" for k, v in given.items() if k in HINTS]
    title = given.get("title")
    return [*([f"title: {title}"] if isinstance(title, str) else []), *said]


def of_row(row: ToolApproval, note: str = "") -> dict:
    return shown(asking.facts(row), note)


def of_id(approval_id: object) -> dict | None:
    if not isinstance(approval_id, int):
        return None
    row = ToolApproval.objects.filter(pk=approval_id).first()
    return of_row(row) if row is not None else None


def render(fields: dict, *, oob: bool = False) -> str:
    return render_to_string("chat/_mcp_approval.html", {"approval": fields, "oob": oob})
